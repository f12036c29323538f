"""A replan puts the kb plugin whose evidence the validator rejected last (docs/decisions.md)."""

from __future__ import annotations

from pathlib import Path

from core.infra.config import EngineConfig, PlannerOrder
from core.kernel.contract import (
    Descriptor,
    GsResult,
    KbResult,
    PluginType,
    Registry,
    Request,
    Status,
    Validator,
    ValResult,
)
from core.kernel.engine import Engine
from core.kernel.events import AnswerReady, AttemptFinished, PlanBuilt
from core.kernel.planners import default_planners
from core.kernel.session import Session
from tests.support.scripted_engine import FAMILIES, GOOD, Evidence, ScriptedGs, run_to_end

OFF_TOPIC = ("notes::chunk-000::unit-009",)


class RejectsOffTopic(Validator):
    """Rejects an answer resting on the off-topic unit, accepts any other."""

    def __init__(self) -> None:
        self.descriptor = Descriptor(id="val-topic", type=PluginType.VAL, name="val-topic", description="test")

    def validate(self, ctx, intent, evidence, answer):
        if evidence.evidence_ids == OFF_TOPIC:
            return ValResult(status=Status.REJECTED, reason="focus terms not covered: heater")
        return ValResult(status=Status.ACCEPTED)


class EchoGs(ScriptedGs):
    def solve(self, ctx, intent, evidence):
        return GsResult(status=Status.SUCCESS, answer="An answer.", cited_ids=evidence.evidence_ids)


def _engine() -> Engine:
    kb_off = FAMILIES["kb"][0](
        "kb-proof", PluginType.KB, lambda: KbResult(status=Status.SUCCESS, outcome=Evidence(OFF_TOPIC))
    )
    kb_good = FAMILIES["kb"][0]("kb-good", PluginType.KB, GOOD["kb"])
    sd = FAMILIES["sd"][0]("sd-good", PluginType.SD, GOOD["sd"])
    gs = EchoGs("gs-echo", PluginType.GS, lambda: None)
    order = PlannerOrder(sd=("sd-good",), kb=("kb-proof", "kb-good"), gs=("gs-echo",), val=("val-topic",))
    config = EngineConfig(
        plugins=(), planners={"planner-default": order, "planner-depth": order}, budgets={"max_replans": 1}
    )
    return Engine(Registry([sd, kb_off, kb_good, gs, RejectsOffTopic()]), default_planners(config.planners), config)


def test_the_next_revision_tries_an_untried_kb_plugin_before_the_rejected_one() -> None:
    events = run_to_end(_engine())
    plans = [e for e in events if isinstance(e, PlanBuilt)]
    kb_stages = [next(s for s in p.stages if s.stage == "kb") for p in plans]
    assert [s.candidates for s in kb_stages] == [("kb-proof", "kb-good"), ("kb-good", "kb-proof")]
    assert any("kb-proof's evidence was rejected in an earlier revision" in r for r in kb_stages[1].reasons)
    kb_calls = [
        e.plugin for e in events if isinstance(e, AttemptFinished) and e.stage == "kb" and e.status != "skipped"
    ]
    assert kb_calls == ["kb-proof", "kb-good"]
    answer = next(e for e in events if isinstance(e, AnswerReady))
    assert answer.status == "grounded" and answer.evidence_ids == ("helix::chunk-000::unit-001",)


def test_a_why_question_on_prose_is_answered_from_the_passage_not_a_proof_about_another_subject(tmp_path: Path) -> None:
    # An observatory's notes: a dependency chain ThinkingDB can prove things about, and prose with the answer.
    (tmp_path / "systems.txt").write_text(
        "The Meridian telescope depends on the dome controller. The dome controller depends on the weather station. "
        "The weather station provides wind readings. Wind readings are relevant for dome safety.\n",
        encoding="utf-8",
    )
    (tmp_path / "telescope.md").write_text(
        "# Telescope maintenance\n\n## Dome\n"
        "The dome shutter closes automatically when wind speed exceeds 15 metres per second.\n"
        "The dome heater prevents ice on the shutter rails during winter nights.\n",
        encoding="utf-8",
    )
    session = Session.open([tmp_path])
    events = list(session.run(Request(question="Why is the dome heater needed?")))
    answer = next(e for e in events if isinstance(e, AnswerReady))
    assert answer.status == "grounded"
    assert "prevents ice on the shutter rails" in answer.answer
