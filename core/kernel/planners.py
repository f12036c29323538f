"""Planners: order each stage's candidates for a request, with a reason for every decision.

Deterministic: the plan depends only on the request, the question's cues and the config.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.infra.config import PlannerOrder
from core.kernel.contract import STAGE_NAMES, STAGES, Descriptor, Plugin, PluginType, Registry, Request
from core.question.intent_cues import QuestionCues
from core.units import Act

_COST_RANK = {"cheap": 0, "moderate": 1, "expensive": 2}


@dataclass(frozen=True)
class Plan:
    """A planner's plugin order for each stage of one revision, and the reasons for it."""

    planner: str
    revision: int
    stages: dict[str, tuple[str, ...]]
    reasons: dict[str, tuple[str, ...]]
    notes: tuple[str, ...] = ()


@dataclass
class _StagePlan:
    """One stage's plugin order while a planner builds it, and the reasons it was changed."""

    order: list[str]
    reasons: list[str] = field(default_factory=list)

    def promote(self, plugin_id: str, reason: str) -> None:
        if plugin_id in self.order and self.order[0] != plugin_id:
            self.order.remove(plugin_id)
            self.order.insert(0, plugin_id)
            self.reasons.append(reason)

    def demote(self, plugin_id: str, reason: str) -> None:
        if plugin_id in self.order and self.order[-1] != plugin_id:
            self.order.remove(plugin_id)
            self.order.append(plugin_id)
            self.reasons.append(reason)


class Planner(Plugin):
    """Orders candidates from a base order, the question's cues, descriptor hints and user pins."""

    def __init__(self, descriptor: Descriptor, order: PlannerOrder, deep_first: bool):
        self.descriptor = descriptor
        self._order = order
        self._deep_first = deep_first

    def plan(
        self,
        request: Request,
        cues: QuestionCues,
        registry: Registry,
        revision: int,
        why: str = "",
        rejected_evidence: tuple[str, ...] = (),
    ) -> Plan:
        """`rejected_evidence`: kb plugins whose evidence an earlier revision's answer was rejected on."""
        stages: dict[str, tuple[str, ...]] = {}
        reasons: dict[str, tuple[str, ...]] = {}
        for stage_type in STAGES:
            name = STAGE_NAMES[stage_type]
            stage = self._base(name, stage_type, registry)
            if stage_type is PluginType.KB:
                self._order_knowledge(stage, cues, registry)
                # The same evidence first again would meet the same validator: the others get their turn.
                for pid in rejected_evidence:
                    stage.demote(pid, f"{pid}'s evidence was rejected in an earlier revision → {pid} last")
            self._apply_user(stage, name, request)
            stages[name] = tuple(stage.order)
            reasons[name] = tuple(stage.reasons)
        notes = (f"revision {revision}: replanned because {why}",) if why else ()
        return Plan(self.id, revision, stages, reasons, notes)

    def _base(self, name: str, stage_type: PluginType, registry: Registry) -> _StagePlan:
        # Ids no loaded plugin has, or of another stage, are skipped (engine.json diagnostics name them).
        configured = [
            pid
            for pid in getattr(self._order, name)
            if pid in registry and registry.get(pid).descriptor.type is stage_type
        ]
        extra = sorted(
            (p.id for p in registry.of_type(stage_type) if p.id not in configured),
            key=lambda pid: (_COST_RANK[registry.get(pid).descriptor.cost_class], pid),
        )
        stage = _StagePlan(configured + extra)
        style = "deep first" if self._deep_first else "cheap first"
        stage.reasons.append(f"{style}: {', '.join(stage.order) or 'no plugins enabled'}")
        return stage

    def _order_knowledge(self, stage: _StagePlan, cues: QuestionCues, registry: Registry) -> None:
        symbolic = [
            pid for pid in stage.order if "symbolic" in registry.get(pid).descriptor.planner_hints.evidence_style
        ]
        if cues.multi_hop and symbolic and not self._deep_first:
            cue = cues.multi_hop_cue or "multi-hop"
            stage.promote(symbolic[0], f"multi-hop cue '{cue}' → {symbolic[0]} first")
        if cues.act is Act.COMPARE and not self._deep_first:
            narrow = [
                pid for pid in stage.order if registry.get(pid).descriptor.planner_hints.preferred_depth == "shallow"
            ]
            for pid in narrow:
                stage.demote(pid, f"compare needs several units → {pid} last")

    @staticmethod
    def _apply_user(stage: _StagePlan, name: str, request: Request) -> None:
        # An excluded candidate stays in the plan, last, so the kernel reports it as skipped and why.
        for pid in list(stage.order):
            if pid in request.excluded:
                stage.order.remove(pid)
                stage.order.append(pid)
                stage.reasons.append(f"{pid} excluded by the user")
        pinned = request.pins.get(name)
        if pinned:
            if pinned not in stage.order:
                stage.order.insert(0, pinned)
            stage.promote(pinned, f"{pinned} pinned by the user")


def default_planners(orders: dict[str, PlannerOrder]) -> list[Planner]:
    """planner-default (cheap first) and planner-depth (deep first), plus any configured others."""
    planners = []
    for planner_id, order in orders.items():
        deep = planner_id == "planner-depth" or planner_id.endswith("-deep")
        descriptor = Descriptor(
            id=planner_id,
            type=PluginType.PLANNER,
            name=planner_id,
            description="deep-first planner" if deep else "cheap-first planner",
        )
        planners.append(Planner(descriptor, order, deep_first=deep))
    return planners
