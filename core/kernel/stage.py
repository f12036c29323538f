"""One stage of a plan revision: its candidates tried in order, each call isolated under its
budgets, falling through on anything but an accepted result (level-1 backtracking), and every
candidate left uncalled reported with why."""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import replace
from typing import Any

from core.infra.config import EngineConfig
from core.kernel.call_budgets import call_token, shard_timings, stopped_reason, uncharged
from core.kernel.calls import PluginCall, Result, capped, checked, run_isolated
from core.kernel.contract import (
    GoalSolver,
    GsResult,
    KbResult,
    KnowledgePlugin,
    Registry,
    RunContext,
    SdResult,
    SeedDetector,
    Status,
    Validator,
    ValResult,
)
from core.kernel.events import AttemptFinished, AttemptStarted, Backtracked, ShardTiming, StageStarted
from core.kernel.planners import Plan
from core.kernel.run_state import RunState

Attempts = list[tuple[str, Result]]
Events = Generator[object, None, Attempts]
Call = Callable[[Any, RunContext], Result]
# A reason not to call a candidate ("" to call it).
Skip = Callable[[str], str]

ACCEPT = {
    "sd": {Status.SUCCESS},
    "kb": {Status.SUCCESS},
    "gs": {Status.SUCCESS},
    "val": {Status.ACCEPTED, Status.REJECTED},
}
_RESULT_TYPES: dict[str, type[Result]] = {"sd": SdResult, "kb": KbResult, "gs": GsResult, "val": ValResult}
_PLUGIN_TYPES: dict[str, type] = {"sd": SeedDetector, "kb": KnowledgePlugin, "gs": GoalSolver, "val": Validator}
# What an accepted result means per stage, for "not reached: kb-balanced was sufficient".
_ACCEPTED_AS = {"sd": "detected the intent", "kb": "was sufficient", "gs": "answered", "val": "gave a verdict"}


def call_everything(plugin_id: str) -> str:
    return ""


def first_accepted(attempts: Attempts, stage: str) -> tuple[str, Result] | None:
    return next(((pid, r) for pid, r in attempts if r.status in ACCEPT[stage]), None)


class StageRunner:
    def __init__(self, registry: Registry, config: EngineConfig):
        self.registry = registry
        self.config = config

    def run(
        self,
        run: RunState,
        plan: Plan,
        stage: str,
        ctx: RunContext,
        call: Call,
        index: int = 0,
        skip: Skip = call_everything,
    ) -> Events:
        """Try the stage's candidates in plan order until one is accepted; level-1 backtrack between them.

        Every candidate that ends the stage uncalled gets a "skipped" AttemptFinished saying why.
        """
        attempts: Attempts = []
        yield from run.emit(StageStarted, stage=stage, revision=plan.revision, intent_index=index)
        stage_started = run.clock()
        done: set[str] = set()
        reported: set[str] = set()
        accepted_by: str | None = None
        while queue := _queue(run, plan, stage, done, skip):
            plugin_id = queue[0]
            yield from run.emit(
                AttemptStarted, stage=stage, plugin=plugin_id, revision=plan.revision, intent_index=index
            )
            if why := _skipped_now(run, stage, plugin_id, done, skip):
                if not why.startswith("not yet"):
                    reported.add(plugin_id)
                yield from run.emit(AttemptFinished, **_skipped(stage, plugin_id, why, plan, index))
                continue
            done.add(plugin_id)
            ctx.request = run.request
            result, ms, not_charged, shards = self._call(run, stage, plugin_id, call, ctx)
            yield from run.emit(
                AttemptFinished,
                stage=stage,
                plugin=plugin_id,
                status=result.status.value,
                reason=result.reason,
                ms=ms,
                intent_index=index,
                revision=plan.revision,
                uncharged=not_charged,
                shards=shards,
            )
            for event in getattr(result, "trace", ()):
                yield from run.relay(event, intent_index=index)
            attempts.append((plugin_id, result))
            if result.status in ACCEPT[stage]:
                accepted_by = plugin_id
                break
            remaining = _queue(run, plan, stage, done, skip)
            if remaining:
                yield from run.emit(
                    Backtracked,
                    level=1,
                    stage=stage,
                    plugin=plugin_id,
                    revision=plan.revision,
                    reason=f"{plugin_id} {result.status.value}: {result.reason or 'no reason given'}; trying {remaining[0]}",
                )
        for plugin_id in candidates(run, plan, stage):
            if plugin_id not in done and plugin_id not in reported:
                why = _not_called(run, plugin_id, skip, stage, accepted_by)
                yield from run.emit(AttemptFinished, **_skipped(stage, plugin_id, why, plan, index))
        run.timings[stage] = run.timings.get(stage, 0.0) + (run.clock() - stage_started) * 1000
        return attempts

    def _call(
        self, run: RunState, stage: str, plugin_id: str, call: Call, ctx: RunContext
    ) -> tuple[Result, float, str, tuple[ShardTiming, ...]]:
        """Call a plugin under a cancel token; exceptions, hangs and malformed results become `error`
        results. Also returns the call's time, what of it was not charged to its timeout, and the
        shards it searched on a cluster."""
        error_type = _RESULT_TYPES[stage]
        try:
            plugin = self.registry.get(plugin_id)
        except Exception as exc:  # noqa: BLE001 - an unknown id is a result, not a crash
            return error_type(status=Status.ERROR, reason=str(exc)), 0.0, "", ()
        if not isinstance(plugin, _PLUGIN_TYPES[stage]):
            return error_type(status=Status.ERROR, reason=f"{plugin_id} is not a {stage} plugin"), 0.0, "", ()
        token, budget_reason = call_token(self.config.budgets, run.deadline)
        if token.cancelled:
            return error_type(status=Status.ERROR, reason=budget_reason), 0.0, "", ()
        # A copy per call: an abandoned plugin keeps its own (cancelled) token, never the next call's.
        call_ctx = replace(ctx, cancel=token, llm_calls_left=run.llm_budget.left, llm_budget=run.llm_budget)
        calls_before = run.llm_budget.left
        steering = run.steering
        started = run.clock()
        outcome = run_isolated(
            plugin_id,
            lambda: call(plugin, call_ctx),
            token,
            (lambda: steering.cancelled) if steering else None,
            lambda: run.guard.over_budget(token),
        )
        ms, not_charged, shards = (run.clock() - started) * 1000, uncharged(token), shard_timings(token)
        if isinstance(call_left := outcome.get("thread"), PluginCall):
            run.guard.abandon(call_left, token)
        if "interrupted" in outcome:
            raise KeyboardInterrupt(f"interrupted inside plugin {plugin_id}")
        if "stopped" in outcome:
            return error_type(status=Status.ERROR, reason="cancelled by the user"), ms, not_charged, shards
        if "pending" in outcome or ("cancelled" in outcome and token.cancelled):
            token.cancel(budget_reason)
            reason = stopped_reason(token, self.config.budgets, budget_reason)
            return error_type(status=Status.ERROR, reason=reason), ms, not_charged, shards
        result = checked(outcome, error_type, stage)
        # Calls a plugin reports beyond those it took from the budget (it talked to the LLM itself).
        run.llm_budget.charge(max(0, getattr(result, "llm_calls", 0) - (calls_before - run.llm_budget.left)))
        if token.budget_notes:  # a cap that bit names itself in the attempt's reason
            result = replace(result, reason="; ".join([result.reason, *token.budget_notes]).lstrip("; "))
        return capped(result, self.config.trace), ms, not_charged, shards


def _skipped(stage: str, plugin_id: str, why: str, plan: Plan, index: int) -> dict[str, object]:
    """The fields of the AttemptFinished of a candidate not called."""
    return {
        "stage": stage,
        "plugin": plugin_id,
        "status": "skipped",
        "reason": why,
        "intent_index": index,
        "revision": plan.revision,
    }


def candidates(run: RunState, plan: Plan, stage: str) -> list[str]:
    """The stage's candidates under the request as it is now (a pin first)."""
    found = list(plan.stages.get(stage, ()))
    pinned = run.request.pins.get(stage)
    if pinned:
        found = [pinned] + [pid for pid in found if pid != pinned]
    return found


def _queue(run: RunState, plan: Plan, stage: str, done: set[str], skip: Skip) -> list[str]:
    """The stage's candidates still to try (pins first, no exclusions, nothing `skip` gives a reason for)."""
    return [
        pid
        for pid in candidates(run, plan, stage)
        if pid not in done and pid not in run.request.excluded and not skip(pid)
    ]


def _not_called(run: RunState, plugin_id: str, skip: Skip, stage: str, accepted_by: str | None) -> str:
    """Why a candidate the stage ended without calling was not called."""
    if plugin_id in run.request.excluded:
        return "excluded by the user"
    if why := skip(plugin_id):
        return why
    if accepted_by:
        return f"not reached: {accepted_by} {_ACCEPTED_AS[stage]}"
    return "not reached"


def _skipped_now(run: RunState, stage: str, plugin_id: str, done: set[str], skip: Skip) -> str:
    """Why a candidate announced by AttemptStarted is no longer called (a change made at that hold)."""
    if plugin_id in run.request.excluded:
        return "excluded by the user"
    if why := skip(plugin_id):
        return why
    pinned = run.request.pins.get(stage)
    # Deferred only while the pin can still run: a pin that is excluded or skipped (a solver
    # already tried on identical evidence) must not defer the others forever.
    if (
        pinned
        and pinned != plugin_id
        and pinned not in done
        and pinned not in run.request.excluded
        and not skip(pinned)
    ):
        return f"not yet: {pinned} pinned first by the user"
    return ""
