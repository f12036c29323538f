"""A kernel with one scripted plugin per stage: the hardening, fault and replan tests put a bad
plugin before each good one and run the engine to its end."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from core.infra.config import EngineConfig, PlannerOrder
from core.kernel.contract import (
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
from core.kernel.events import AnswerReady, RunFinished, from_json_line, to_json_line
from core.kernel.planners import default_planners
from core.units import Act, Intent

STAGES = ("sd", "kb", "gs", "val")
INTENT = Intent(act=Act.DIAGNOSE, target="why do Helix writes stall?", output="text")


@dataclass(frozen=True)
class Evidence:
    """What the kernel reads of a RetrievalOutcome: the evidence ids."""

    evidence_ids: tuple[str, ...]


GOOD: dict[str, Callable[[], object]] = {
    "sd": lambda: SdResult(status=Status.SUCCESS, intent_cnl="@i1 intent diagnose x", intents=(INTENT,)),
    "kb": lambda: KbResult(status=Status.SUCCESS, reason="2 units", outcome=Evidence(("helix::chunk-000::unit-001",))),
    "gs": lambda: GsResult(status=Status.SUCCESS, answer="Disk pressure.", cited_ids=("helix::chunk-000::unit-001",)),
    "val": lambda: ValResult(status=Status.ACCEPTED),
}


class _Scripted:
    def __init__(self, pid: str, kind: PluginType, behave: Callable[[], object]):
        self.descriptor = Descriptor(id=pid, type=kind, name=pid, description=f"scripted {pid}")
        self.behave = behave


class ScriptedSd(_Scripted, SeedDetector):
    def detect(self, ctx):
        return self.behave()


class ScriptedKb(_Scripted, KnowledgePlugin):
    def retrieve(self, ctx, intent):
        return self.behave()


class ScriptedGs(_Scripted, GoalSolver):
    def solve(self, ctx, intent, evidence):
        return self.behave()


class ScriptedVal(_Scripted, Validator):
    def validate(self, ctx, intent, evidence, answer):
        return self.behave()


FAMILIES = {
    "sd": (ScriptedSd, PluginType.SD),
    "kb": (ScriptedKb, PluginType.KB),
    "gs": (ScriptedGs, PluginType.GS),
    "val": (ScriptedVal, PluginType.VAL),
}


class ViewStub:
    def with_extra(self, units):
        return self


def engine_with(bad: dict[str, Callable[[], object]], timeout_ms: int = 2000, with_good: bool = True) -> Engine:
    """Per stage: `<stage>-bad` (when given) tried before `<stage>-good` (unless with_good is off)."""
    plugins, order = [], {}
    for stage in STAGES:
        cls, kind = FAMILIES[stage]
        ids = []
        if stage in bad:
            plugins.append(cls(f"{stage}-bad", kind, bad[stage]))
            ids.append(f"{stage}-bad")
        if with_good or stage not in bad:
            plugins.append(cls(f"{stage}-good", kind, GOOD[stage]))
            ids.append(f"{stage}-good")
        order[stage] = tuple(ids)
    plan = PlannerOrder(**order)
    config = EngineConfig(
        plugins=(),
        planners={"planner-default": plan, "planner-depth": plan},
        budgets={"plugin_timeout_ms": timeout_ms, "max_replans": 1},
    )
    return Engine(Registry(plugins), default_planners(config.planners), config)


def run_to_end(engine: Engine, question: str = "Why do Helix writes stall?") -> list:
    events = list(engine.run(Request(question=question), ViewStub()))
    assert isinstance(events[-2], AnswerReady) and isinstance(events[-1], RunFinished)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert [from_json_line(to_json_line(e)) for e in events] == events
    return events
