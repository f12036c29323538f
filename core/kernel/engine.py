"""The MRP-VM kernel: runs a plan stage by stage and yields typed trace events.

It is neutral: it orders and calls plugins, relays the events they produce, and backtracks;
retrieval, normalisation and synthesis all live in plugins.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, cast

from core.cnl import parse_intents
from core.infra.cancel import CallBudget
from core.infra.config import EngineConfig
from core.kernel.call_budgets import RequestGuard
from core.kernel.calls import Result, answer_for_trace, cut_for_trace
from core.kernel.contract import (
    GoalSolver,
    GsResult,
    KbResult,
    KnowledgePlugin,
    Registry,
    Request,
    RunContext,
    SdResult,
    Status,
    ValResult,
)
from core.kernel.events import (
    Backtracked,
    IntentDetected,
    PlanBuilt,
    PlanStage,
    RunFinished,
    RunStarted,
    Validated,
)
from core.kernel.planners import Plan, Planner
from core.kernel.revisions import Part, Revision, answer_event
from core.kernel.run_state import Cancelled, RunState, intervened
from core.kernel.stage import Attempts, StageRunner, first_accepted
from core.kernel.steering import Steering
from core.units import Intent

if TYPE_CHECKING:
    from core.kb.knowledge_base import KBView

USER_INTENT = "user"


class Engine:
    def __init__(
        self,
        registry: Registry,
        planners: Sequence[Planner],
        config: EngineConfig,
        services: object = None,
        clock: Callable[[], float] = time.perf_counter,
    ):
        self.registry = registry
        self.planners = {p.id: p for p in planners}
        self.config = config
        self.services = services
        self.clock = clock
        self.stages = StageRunner(registry, config)

    def planner_sequence(self, request: Request) -> list[Planner]:
        order = list(self.config.planner_sequence)
        if request.planner:
            order = [request.planner] + [p for p in order if p != request.planner]
        return [self.planners[p] for p in order[: self.config.budgets.max_replans + 1]]

    def run(
        self, request: Request, view: KBView, kb_version: str = "", steering: Steering | None = None
    ) -> Iterator[object]:
        """Yield the trace of one request; the answer is the second-to-last event.

        With `steering`, a consumer that holds the generator can change what is still ahead
        (see core.kernel.steering) or cancel: the run then ends with RunFinished(status="cancelled").
        """
        budgets = self.config.budgets
        now = time.monotonic()
        run = RunState(
            request=request,
            view=view,
            services=self.services,
            llm_budget=CallBudget(
                budgets.max_llm_calls_per_request,
                deadline=now + budgets.llm_deadline_ms / 1000,
                name="maxLlmCallsPerRequest",
                deadline_name=f"llmDeadlineMs ({budgets.llm_deadline_ms} ms)",
            ),
            deadline=now + budgets.request_timeout_ms / 1000,
            clock=self.clock,
            steering=steering,
            guard=RequestGuard(budgets.max_request_memory_mb),
        )
        started = self.clock()
        caller = request.caller
        yield run.new(
            RunStarted,
            question=request.question,
            caller_tags=tuple(sorted(caller.tags)),
            caller_region=caller.region,
            as_of=caller.as_of.isoformat(),
            kb_version=kb_version,
            pins=dict(request.pins),
            excluded=tuple(sorted(request.excluded)),
            excluded_units=tuple(sorted(request.excluded_units)),
            memory=request.memory,
            memory_withheld=request.memory_withheld,
            intent_cnl=request.intent_cnl,
        )
        if len(request.question) > budgets.max_question_chars:
            # Refused before any analysis: cue detection, splitting and retrieval all grow with it.
            reason = (
                f"the question is {len(request.question):,} characters long, over the "
                f"{budgets.max_question_chars:,} allowed (budgets.maxQuestionChars)"
            )
            answer = answer_event(Revision(0, failure=reason))
            yield run.stamp(answer)
            run.timings["total"] = (self.clock() - started) * 1000
            yield run.new(RunFinished, status=answer.status, replans=0, timings_ms=run.timings)
            return
        for intervention in request.interventions:
            yield run.stamp(intervened(intervention, live=False))
        try:
            yield from self._plans(run, started)
        except Cancelled:
            run.timings["total"] = (self.clock() - started) * 1000
            yield run.new(RunFinished, status="cancelled", timings_ms=run.timings)
        finally:
            run.guard.finish()

    def _plans(self, run: RunState, started: float) -> Generator[object, None, None]:
        cues = run.questions.of(run.request.question).cues
        revisions: list[Revision] = []
        planner_of: dict[int, str] = {}
        why = ""
        planners = self.planner_sequence(run.request)
        rejected: dict[str, None] = {}
        for number, planner in enumerate(planners):
            plan = planner.plan(run.request, cues, self.registry, number, why, tuple(rejected))
            planner_of[plan.revision] = plan.planner
            yield from run.emit(PlanBuilt, **_plan_fields(plan))
            revision = yield from self._revision(run, plan)
            revisions.append(revision)
            if revision.accepted:
                break
            why = revision.why_not_accepted()
            rejected.update(dict.fromkeys(revision.rejected_evidence()))
            if number + 1 < len(planners):
                yield from run.emit(
                    Backtracked,
                    level=2,
                    stage="plan",
                    plugin=plan.planner,
                    revision=plan.revision,
                    reason=f"{why}; replanning with {planners[number + 1].id}",
                )
        best = max(revisions, key=lambda r: (r.score, -r.revision))
        if not best.accepted:
            yield from run.emit(
                Backtracked,
                level=3,
                stage="answer",
                plugin=planner_of[best.revision],
                revision=best.revision,
                reason=f"no plan revision was fully grounded ({revisions[-1].why_not_accepted()}); "
                f"answering with the best result, from revision {best.revision}",
            )
        answer = answer_for_trace(answer_event(best), self.config.trace)
        yield from run.relay(answer)
        run.timings["total"] = (self.clock() - started) * 1000
        yield run.new(RunFinished, status=answer.status, replans=len(revisions) - 1, timings_ms=run.timings)

    def _revision(self, run: RunState, plan: Plan) -> Generator[object, None, Revision]:
        revision = Revision(plan.revision)
        ctx = RunContext(
            request=run.request,
            view=run.view,
            services=run.services,
            llm_budget=run.llm_budget,
            questions=run.questions,
        )
        attempts = yield from self.stages.run(
            run,
            plan,
            "sd",
            ctx,
            lambda p, c: p.detect(c),
            skip=lambda pid: "the user supplied the intent" if run.request.intent_cnl is not None else "",
        )
        seed: tuple[str, SdResult] | None
        if run.request.intent_cnl is not None:
            seed = (USER_INTENT, _user_intent(run.request.intent_cnl))
            if seed[1].status is not Status.SUCCESS:
                revision.failure = seed[1].reason
                return revision
        else:
            # A stage's results are of its result type (calls.checked).
            seed = cast("tuple[str, SdResult] | None", first_accepted(attempts, "sd"))
        if seed is None:
            revision.failure = "no seed detector produced an intent"
            return revision
        plugin_id, sd = seed
        limit = self.config.budgets.max_sub_questions
        intents = sd.intents[:limit]
        found = len(sd.intents) + sd.dropped_questions
        if found > len(intents):
            revision.note = (
                f"Only the first {len(intents)} of {found} questions were answered (budgets.maxSubQuestions)."
            )
        yield from run.emit(
            IntentDetected,
            plugin=plugin_id,
            cnl=cut_for_trace(sd.intent_cnl, self.config.trace.max_answer_chars, "maxAnswerChars"),
            intents=intents,
            context_unit_ids=tuple(u.id for u in sd.context_units),
            resolved=sd.resolved,
            unresolved=sd.unresolved,
            memory_used=sd.memory_used,
        )
        if sd.context_units:
            ctx.view = run.view.with_extra(sd.context_units)
        for index, intent in enumerate(intents):
            part = yield from self._solve_intent(run, plan, ctx, index, intent)
            revision.parts.append(part)
        return revision

    def _solve_intent(
        self, run: RunState, plan: Plan, ctx: RunContext, index: int, intent: Intent
    ) -> Generator[object, None, Part]:
        part = Part(intent)
        kb_attempts = yield from self.stages.run(
            run, plan, "kb", ctx, lambda p, c: self._retrieve(run, p, c, index, intent), index
        )
        part.evidence = cast("KbResult | None", _first_result(kb_attempts, "kb")) or _best_insufficient(kb_attempts)
        kb_id = next((pid for pid, r in kb_attempts if r is part.evidence), "")
        part.evidence_plugin = kb_id or None
        evidence = part.evidence or KbResult(status=Status.INSUFFICIENT, reason="no kb plugin ran")

        def solve(plugin: GoalSolver, call_ctx: RunContext) -> GsResult:
            run.tried.add((index, kb_id, plugin.id))
            return plugin.solve(call_ctx, intent, evidence)

        gs_attempts = yield from self.stages.run(
            run,
            plan,
            "gs",
            ctx,
            solve,
            index,
            skip=lambda pid: "already tried on identical evidence" if (index, kb_id, pid) in run.tried else "",
        )
        part.answer = cast(
            "GsResult | None", _first_result(gs_attempts, "gs") or _first_status(gs_attempts, Status.NO_CONTEXT)
        )
        if part.answer is None or part.answer.status is not Status.SUCCESS:
            return part
        val_attempts = yield from self.stages.run(
            run, plan, "val", ctx, lambda p, c: p.validate(c, intent, evidence, part.answer), index
        )
        verdict = cast("tuple[str, ValResult] | None", first_accepted(val_attempts, "val"))  # calls.checked
        if verdict is not None:
            part.verdict = verdict[1]
            yield from run.emit(
                Validated,
                plugin=verdict[0],
                status=verdict[1].status.value,
                reason=verdict[1].reason,
                revision=plan.revision,
                intent_index=index,
            )
        return part

    def _retrieve(
        self, run: RunState, plugin: KnowledgePlugin, ctx: RunContext, index: int, intent: Intent
    ) -> KbResult:
        """kb results are deterministic per view and intent, so a replan reuses them instead of re-ranking."""
        excluded = run.request.excluded_units
        key = (index, plugin.id, excluded)
        if key not in run.kb_cache:
            narrowed = replace(ctx, view=ctx.view.without(excluded)) if excluded else ctx
            run.kb_cache[key] = plugin.retrieve(narrowed, intent)
        return run.kb_cache[key]


def _user_intent(cnl: str) -> SdResult:
    """The user's own Intent CNL, checked by the same parser as every seed detector's output."""
    intents, diagnostics = parse_intents(cnl, file="<user intent>")
    errors = [d.format() for d in diagnostics if d.is_error]
    if errors or not intents:
        reason = errors[0] if errors else "no intent statement"
        return SdResult(status=Status.ERROR, reason=f"the user's intent is invalid: {reason}", intent_cnl=cnl)
    return SdResult(status=Status.SUCCESS, reason="intent written by the user", intent_cnl=cnl, intents=tuple(intents))


def _first_result(attempts: Attempts, stage: str) -> Result | None:
    found = first_accepted(attempts, stage)
    return found[1] if found else None


def _first_status(attempts: Attempts, status: Status) -> Result | None:
    return next((r for _, r in attempts if r.status is status), None)


def _best_insufficient(attempts: Attempts) -> KbResult | None:
    """The weak evidence to answer from when no kb plugin was sufficient: the one that kept most."""
    kb_attempts = cast("list[tuple[str, KbResult]]", attempts)  # a kb stage's results (calls.checked)
    usable = [r for _, r in kb_attempts if r.status is Status.INSUFFICIENT and r.outcome is not None]
    return max(usable, key=lambda r: len(r.evidence_ids), default=None)


def _plan_fields(plan: Plan) -> dict[str, object]:
    """The fields of the PlanBuilt event of `plan`."""
    return {
        "revision": plan.revision,
        "planner": plan.planner,
        "stages": tuple(
            PlanStage(stage=stage, candidates=candidates, reasons=plan.reasons.get(stage, ()))
            for stage, candidates in plan.stages.items()
        ),
        "reasons": plan.notes,
    }
