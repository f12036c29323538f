"""The kernel with scripted plugins: fallthrough, the three backtracking levels, budgets, traces."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from core.infra.config import EngineConfig, PlannerOrder
from core.kernel.contract import (
    INSUFFICIENT_PREFACE,
    Descriptor,
    GoalSolver,
    GsResult,
    KbResult,
    KnowledgePlugin,
    PluginType,
    Registry,
    Request,
    SdResult,
    SeedDetector,
    Status,
    Validator,
    ValResult,
)
from core.kernel.engine import Engine
from core.kernel.events import (
    AnswerReady,
    AttemptFinished,
    Backtracked,
    PlanBuilt,
    RunFinished,
    Validated,
    read_trace,
    write_trace,
)
from core.kernel.planners import default_planners
from core.kernel.summary import summarise
from core.units import Act, Intent


@dataclass(frozen=True)
class Outcome:
    """Stands in for a RetrievalOutcome: the kernel only reads evidence ids through KbResult."""

    evidence_ids: tuple[str, ...]


class View:
    def with_extra(self, units):
        return self


def _descriptor(pid: str, ptype: PluginType) -> Descriptor:
    return Descriptor(id=pid, type=ptype, name=pid, description=pid)


class Seed(SeedDetector):
    def __init__(self, pid="sd-a", result=None, raises=None, sleep=0.0):
        self.descriptor = _descriptor(pid, PluginType.SD)
        self.result, self.raises, self.sleep = result, raises, sleep
        # Deaf to its token, as a hung plugin is; `wake` lets the test end it before the next test.
        self.wake = threading.Event()

    def detect(self, ctx):
        if self.sleep:
            self.wake.wait(self.sleep)
        if self.raises:
            raise self.raises
        intent = Intent(act=Act.EXPLAIN, target=ctx.request.question, output="text")
        return self.result or SdResult(status=Status.SUCCESS, intent_cnl="@i1 ...", intents=(intent,))


class Kb(KnowledgePlugin):
    def __init__(self, pid, status=Status.SUCCESS, ids=("u1",)):
        self.descriptor = _descriptor(pid, PluginType.KB)
        self.status, self.ids, self.calls = status, ids, 0

    def retrieve(self, ctx, intent):
        self.calls += 1
        return KbResult(status=self.status, reason=f"{self.id} says {self.status.value}", outcome=Outcome(self.ids))


class Gs(GoalSolver):
    def __init__(self, pid, status=Status.SUCCESS, weak=False):
        self.descriptor = _descriptor(pid, PluginType.GS)
        self.status = status
        self.weak = weak
        self.seen: list[tuple[str, ...]] = []

    def solve(self, ctx, intent, evidence):
        self.seen.append(evidence.evidence_ids)
        if self.status is not Status.SUCCESS:
            return GsResult(status=self.status, reason=f"{self.id} cannot")
        text = f"from {','.join(evidence.evidence_ids)}"
        if self.weak:
            text = f"{INSUFFICIENT_PREFACE} to answer fully; {text}"
        return GsResult(status=Status.SUCCESS, answer=text, cited_ids=evidence.evidence_ids, weak=self.weak)


class Val(Validator):
    def __init__(self, pid="val-a", verdicts=(Status.ACCEPTED,)):
        self.descriptor = _descriptor(pid, PluginType.VAL)
        self.verdicts = list(verdicts)

    def validate(self, ctx, intent, evidence, answer):
        status = self.verdicts.pop(0) if len(self.verdicts) > 1 else self.verdicts[0]
        return ValResult(status=status, reason="" if status is Status.ACCEPTED else f"{answer.answer} is not enough")


def _engine(*plugins, timeout_ms=2000, max_replans=1) -> Engine:
    registry = Registry(plugins)
    ids = {t: [p.id for p in registry.of_type(t)] for t in PluginType}
    order = PlannerOrder(sd=ids[PluginType.SD], kb=ids[PluginType.KB], gs=ids[PluginType.GS], val=ids[PluginType.VAL])
    deep = PlannerOrder(sd=order.sd, kb=tuple(reversed(order.kb)), gs=order.gs, val=order.val)
    config = EngineConfig(
        plugins=(),
        planners={"planner-default": order, "planner-depth": deep},
        budgets={"plugin_timeout_ms": timeout_ms, "max_replans": max_replans},
    )
    return Engine(registry, default_planners(config.planners), config)


def _run(engine: Engine, question="why is x relevant for y?", **request) -> list:
    return list(engine.run(Request(question=question, **request), View()))


def _of(events, kind):
    return [e for e in events if isinstance(e, kind)]


def test_happy_path_is_grounded_and_sequenced() -> None:
    events = _run(_engine(Seed(), Kb("kb-a"), Gs("gs-a"), Val()))
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    answer = _of(events, AnswerReady)[0]
    assert (answer.status, answer.answer, answer.evidence_ids) == ("grounded", "from u1", ("u1",))
    assert _of(events, Backtracked) == []
    assert isinstance(events[-1], RunFinished) and events[-1].status == "grounded"


def test_insufficient_kb_falls_through_with_a_level_one_backtrack() -> None:
    events = _run(_engine(Seed(), Kb("kb-a", Status.INSUFFICIENT, ()), Kb("kb-b"), Gs("gs-a"), Val()))
    backtrack = _of(events, Backtracked)[0]
    assert (backtrack.level, backtrack.stage, backtrack.plugin) == (1, "kb", "kb-a")
    assert "trying kb-b" in backtrack.reason
    assert _of(events, AnswerReady)[0].evidence_ids == ("u1",)


def test_a_plugin_that_raises_is_an_error_and_the_run_goes_on() -> None:
    events = _run(_engine(Seed("sd-a", raises=RuntimeError("boom")), Seed("sd-b"), Kb("kb-a"), Gs("gs-a"), Val()))
    first = _of(events, AttemptFinished)[0]
    assert (first.plugin, first.status, first.reason) == ("sd-a", "error", "raised RuntimeError: boom")
    assert _of(events, AnswerReady)[0].status == "grounded"


def test_a_plugin_that_hangs_past_its_timeout_is_an_error() -> None:
    hung = Seed("sd-a", sleep=1.0)
    events = _run(_engine(hung, Seed("sd-b"), Kb("kb-a"), Gs("gs-a"), Val(), timeout_ms=50))
    hung.wake.set()
    first = _of(events, AttemptFinished)[0]
    assert (first.plugin, first.status, first.reason) == (
        "sd-a",
        "error",
        "cancelled: timed out after 50 ms (pluginTimeoutMs)",
    )


def test_a_malformed_result_is_an_error() -> None:
    class Bad(Seed):
        def detect(self, ctx):
            return {"status": "success"}

    events = _run(_engine(Bad("sd-a"), Seed("sd-b"), Kb("kb-a"), Gs("gs-a"), Val()))
    assert _of(events, AttemptFinished)[0].reason == "returned dict, not SdResult"


def test_unsupported_solver_falls_through_to_the_next() -> None:
    events = _run(
        _engine(Seed(), Kb("kb-a"), Gs("gs-llm", Status.UNSUPPORTED), Gs("gs-b"), Val()), pins={"gs": "gs-llm"}
    )
    attempts = [(e.plugin, e.status) for e in _of(events, AttemptFinished) if e.stage == "gs"]
    assert attempts == [("gs-llm", "unsupported"), ("gs-b", "success")]
    assert [b.level for b in _of(events, Backtracked)] == [1]


def test_validator_rejection_replans_with_the_next_planner_and_skips_tried_combinations() -> None:
    kb_a, kb_b, gs = Kb("kb-a", ids=("u1",)), Kb("kb-b", ids=("u2",)), Gs("gs-a")
    events = _run(_engine(Seed(), kb_a, kb_b, gs, Val(verdicts=(Status.REJECTED, Status.ACCEPTED))))
    plans = _of(events, PlanBuilt)
    assert [(p.revision, p.planner) for p in plans] == [(0, "planner-default"), (1, "planner-depth")]
    replan = [b for b in _of(events, Backtracked) if b.level == 2]
    assert len(replan) == 1 and "replanning with planner-depth" in replan[0].reason
    assert gs.seen == [("u1",), ("u2",)]
    assert _of(events, AnswerReady)[0].evidence_ids == ("u2",)
    assert [v.status for v in _of(events, Validated)] == ["rejected", "accepted"]


def test_only_weak_results_end_with_a_level_three_weak_answer() -> None:
    events = _run(_engine(Seed(), Kb("kb-a"), Gs("gs-a"), Val(verdicts=(Status.REJECTED,))))
    levels = [b.level for b in _of(events, Backtracked)]
    assert levels == [2, 3]
    answer = _of(events, AnswerReady)[0]
    # A weak answer says so first, even when the goal solver did not (a validator rejected it).
    assert answer.status == "weak"
    assert answer.answer.startswith(INSUFFICIENT_PREFACE) and answer.answer.endswith("from u1")


def test_no_evidence_at_all_is_no_context_not_a_failure() -> None:
    engine = _engine(Seed(), Kb("kb-a", Status.INSUFFICIENT, ()), Gs("gs-a", Status.NO_CONTEXT), Val())
    events = _run(engine)
    answer = _of(events, AnswerReady)[0]
    assert answer.status == "no-context"
    assert answer.answer == "I found no evidence in the knowledge base for this question."
    assert events[-1].status == "no-context"


def test_kb_results_are_reused_on_replan() -> None:
    kb = Kb("kb-a")
    _run(_engine(Seed(), kb, Gs("gs-a"), Gs("gs-b"), Val(verdicts=(Status.REJECTED, Status.ACCEPTED))))
    assert kb.calls == 1


def test_a_pinned_solver_already_tried_on_the_same_evidence_does_not_stall_the_replan() -> None:
    """Regression: the pin used to defer every other solver forever once the pin itself was skipped."""
    events = _run(
        _engine(Seed(), Kb("kb-a"), Gs("gs-a"), Gs("gs-b"), Val(verdicts=(Status.REJECTED, Status.ACCEPTED))),
        pins={"gs": "gs-a"},
    )
    skipped = [(e.plugin, e.reason, e.revision) for e in _of(events, AttemptFinished) if e.status == "skipped"]
    assert ("gs-a", "already tried on identical evidence", 1) in skipped
    assert isinstance(events[-1], RunFinished)


def test_plan_is_deterministic_and_pins_and_exclusions_carry_reasons() -> None:
    engine = _engine(Seed(), Kb("kb-a"), Kb("kb-b"), Gs("gs-a"), Val())
    first = _of(_run(engine, pins={"kb": "kb-b"}, excluded=frozenset({"kb-a"})), PlanBuilt)[0]
    second = _of(_run(engine, pins={"kb": "kb-b"}, excluded=frozenset({"kb-a"})), PlanBuilt)[0]
    assert first == second
    kb_stage = next(s for s in first.stages if s.stage == "kb")
    assert kb_stage.candidates == ("kb-b", "kb-a")
    assert "kb-a excluded by the user" in kb_stage.reasons


def test_trace_round_trips_through_json_lines(tmp_path: Path) -> None:
    events = _run(_engine(Seed(), Kb("kb-a", Status.INSUFFICIENT, ()), Kb("kb-b"), Gs("gs-a"), Val()))
    path = tmp_path / "run.jsonl"
    write_trace(events, path)
    loaded, problems = read_trace(path)
    assert problems == []
    assert loaded == events
    assert summarise(loaded) == summarise(events)


def test_a_bad_trace_line_is_a_diagnostic_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    events = _run(_engine(Seed(), Kb("kb-a"), Gs("gs-a"), Val()))
    write_trace(events[:2], path)
    path.write_text(path.read_text() + '{"kind": "nonsense"}\n')
    loaded, problems = read_trace(path)
    assert len(loaded) == 2
    assert [(p.code.value, p.line) for p in problems] == [("MALFORMED_LINE", 3)]


def test_registry_refuses_duplicates_and_names_known_ids() -> None:
    from core.kernel.contract import RegistryError

    registry = Registry([Kb("kb-a")])
    with pytest.raises(RegistryError, match="duplicate plugin id 'kb-a'"):
        registry.add(Kb("kb-a"))
    with pytest.raises(RegistryError, match=r"unknown plugin id 'kb-z' \(known: kb-a\)"):
        registry.get("kb-z")
    with pytest.raises(RegistryError, match="is a kb-plugin, not a gs-plugin"):
        registry.get("kb-a", PluginType.GS)


def test_a_trace_keeps_answers_with_unicode_line_separators(tmp_path: Path) -> None:
    events = _run(_engine(Seed(), Kb("kb-a"), Gs("gs-a"), Val()), question="why x\u2028y\x85z?")
    path = tmp_path / "run.jsonl"
    write_trace(events, path)
    loaded, problems = read_trace(path)
    assert problems == [] and loaded == events


def test_an_answer_its_solver_calls_weak_is_never_grounded() -> None:
    # Sufficient evidence and an accepting validator: only the solver's own verdict says weak.
    events = _run(_engine(Seed(), Kb("kb-a"), Gs("gs-a", weak=True), Val()))
    answer = _of(events, AnswerReady)[0]
    assert answer.status == "weak"
    assert answer.answer == f"{INSUFFICIENT_PREFACE} to answer fully; from u1"
    assert [p.status for p in answer.parts] == ["weak"]
