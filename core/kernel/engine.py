"""The MRP-VM kernel: runs a plan stage by stage and yields typed trace events.

It is neutral: it orders and calls plugins, relays the events they produce, and backtracks;
retrieval, normalisation and synthesis all live in plugins.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field, replace

from core.cnl import parse_intents
from core.infra.cancel import CallBudget
from core.infra.config import EngineConfig
from core.kernel.call_budgets import RequestGuard, call_token, shard_timings, stopped_reason, uncharged
from core.kernel.calls import Result, answer_for_trace, capped, checked, cut_for_trace, run_isolated
from core.kernel.contract import (
    GoalSolver,
    GsResult,
    KbResult,
    KnowledgePlugin,
    Registry,
    Request,
    RunContext,
    SdResult,
    SeedDetector,
    Status,
    Validator,
    ValResult,
)
from core.kernel.events import (
    AttemptFinished,
    AttemptStarted,
    Backtracked,
    IntentDetected,
    Intervened,
    PlanBuilt,
    PlanStage,
    RunFinished,
    RunStarted,
    ShardTiming,
    StageStarted,
    Validated,
)
from core.kernel.planners import Plan, Planner
from core.kernel.revisions import Part, Revision, answer_event
from core.kernel.steering import Intervention, Steering, apply
from core.question import Questions
from core.units import Intent

Events = Generator[object, None, "list[tuple[str, Result]]"]

_ACCEPT = {
    "sd": {Status.SUCCESS},
    "kb": {Status.SUCCESS},
    "gs": {Status.SUCCESS},
    "val": {Status.ACCEPTED, Status.REJECTED},
}
_RESULT_TYPES: dict[str, type] = {"sd": SdResult, "kb": KbResult, "gs": GsResult, "val": ValResult}
_PLUGIN_TYPES: dict[str, type] = {"sd": SeedDetector, "kb": KnowledgePlugin, "gs": GoalSolver, "val": Validator}
# What an accepted result means per stage, for "not reached: kb-balanced was sufficient".
_ACCEPTED_AS = {"sd": "detected the intent", "kb": "was sufficient", "gs": "answered", "val": "gave a verdict"}
USER_INTENT = "user"


class _Cancelled(Exception):
    """Raised inside the run when the steering was cancelled; run() turns it into RunFinished."""


@dataclass
class _RunState:
    request: Request
    view: object
    services: object
    llm_budget: CallBudget
    # On the time.monotonic() clock, which the cancel tokens use; `clock` only times events.
    deadline: float
    clock: Callable[[], float]
    # The request's memory budget and the plugin threads it left running (core/kernel/call_budgets.py).
    guard: RequestGuard
    seq: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    tried: set[tuple[int, str, str]] = field(default_factory=set)
    kb_cache: dict[tuple[int, str, frozenset[str]], KbResult] = field(default_factory=dict)
    steering: Steering | None = None
    # The run's questions, each analysed once: the planner reads the request's, every plugin its intent's.
    questions: Questions = field(default_factory=Questions)

    def stamp(self, event):
        self.seq += 1
        return event.model_copy(update={"seq": self.seq})


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

    def planner_sequence(self, request: Request) -> list[Planner]:
        order = list(self.config.planner_sequence)
        if request.planner:
            order = [request.planner] + [p for p in order if p != request.planner]
        return [self.planners[p] for p in order[: self.config.budgets.max_replans + 1]]

    def run(self, request: Request, view, kb_version: str = "", steering: Steering | None = None) -> Iterator[object]:
        """Yield the trace of one request; the answer is the second-to-last event.

        With `steering`, a consumer that holds the generator can change what is still ahead
        (see core.kernel.steering) or cancel: the run then ends with RunFinished(status="cancelled").
        """
        budgets = self.config.budgets
        now = time.monotonic()
        run = _RunState(
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
        yield run.stamp(
            RunStarted(
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
            yield run.stamp(RunFinished(status=answer.status, replans=0, timings_ms=run.timings))
            return
        for intervention in request.interventions:
            yield run.stamp(_intervened(intervention, live=False))
        try:
            yield from self._plans(run, started)
        except _Cancelled:
            run.timings["total"] = (self.clock() - started) * 1000
            yield run.stamp(RunFinished(status="cancelled", timings_ms=run.timings))
        finally:
            run.guard.finish()

    def _plans(self, run: _RunState, started: float) -> Generator[object, None, None]:
        cues = run.questions.of(run.request.question).cues
        revisions: list[Revision] = []
        planner_of: dict[int, str] = {}
        why = ""
        planners = self.planner_sequence(run.request)
        rejected: dict[str, None] = {}
        for number, planner in enumerate(planners):
            plan = planner.plan(run.request, cues, self.registry, number, why, tuple(rejected))
            planner_of[plan.revision] = plan.planner
            yield from self._emit(run, _plan_event(plan))
            revision = yield from self._revision(run, plan)
            revisions.append(revision)
            if revision.accepted:
                break
            why = revision.why_not_accepted()
            rejected.update(dict.fromkeys(revision.rejected_evidence()))
            if number + 1 < len(planners):
                yield from self._emit(
                    run,
                    Backtracked(
                        level=2,
                        stage="plan",
                        plugin=plan.planner,
                        revision=plan.revision,
                        reason=f"{why}; replanning with {planners[number + 1].id}",
                    ),
                )
        best = max(revisions, key=lambda r: (r.score, -r.revision))
        if not best.accepted:
            yield from self._emit(
                run,
                Backtracked(
                    level=3,
                    stage="answer",
                    plugin=planner_of[best.revision],
                    revision=best.revision,
                    reason=f"no plan revision was fully grounded ({revisions[-1].why_not_accepted()}); "
                    f"answering with the best result, from revision {best.revision}",
                ),
            )
        answer = answer_for_trace(answer_event(best), self.config.trace)
        yield from self._emit(run, answer)
        run.timings["total"] = (self.clock() - started) * 1000
        yield run.stamp(RunFinished(status=answer.status, replans=len(revisions) - 1, timings_ms=run.timings))

    def _revision(self, run: _RunState, plan: Plan) -> Generator[object, None, Revision]:
        revision = Revision(plan.revision)
        ctx = RunContext(
            request=run.request,
            view=run.view,
            services=run.services,
            llm_budget=run.llm_budget,
            questions=run.questions,
        )
        attempts = yield from self._stage(
            run,
            plan,
            "sd",
            ctx,
            lambda p, c: p.detect(c),
            skip=lambda pid: "the user supplied the intent" if run.request.intent_cnl is not None else "",
        )
        if run.request.intent_cnl is not None:
            seed = (USER_INTENT, _user_intent(run.request.intent_cnl))
            if seed[1].status is not Status.SUCCESS:
                revision.failure = seed[1].reason
                return revision
        else:
            seed = _first(attempts, "sd")
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
        yield from self._emit(
            run,
            IntentDetected(
                plugin=plugin_id,
                cnl=cut_for_trace(sd.intent_cnl, self.config.trace.max_answer_chars, "maxAnswerChars"),
                intents=intents,
                context_unit_ids=tuple(u.id for u in sd.context_units),
                resolved=sd.resolved,
                unresolved=sd.unresolved,
                memory_used=sd.memory_used,
            ),
        )
        if sd.context_units:
            ctx.view = run.view.with_extra(sd.context_units)
        for index, intent in enumerate(intents):
            part = yield from self._solve_intent(run, plan, ctx, index, intent)
            revision.parts.append(part)
        return revision

    def _solve_intent(self, run: _RunState, plan: Plan, ctx: RunContext, index: int, intent: Intent):
        part = Part(intent)
        kb_attempts = yield from self._stage(
            run, plan, "kb", ctx, lambda p, c: self._retrieve(run, p, c, index, intent), index
        )
        part.evidence = _first_result(kb_attempts, "kb") or _best_insufficient(kb_attempts)
        kb_id = next((pid for pid, r in kb_attempts if r is part.evidence), "")
        part.evidence_plugin = kb_id or None
        evidence = part.evidence or KbResult(status=Status.INSUFFICIENT, reason="no kb plugin ran")

        def solve(plugin: GoalSolver, call_ctx: RunContext) -> GsResult:
            run.tried.add((index, kb_id, plugin.id))
            return plugin.solve(call_ctx, intent, evidence)

        gs_attempts = yield from self._stage(
            run,
            plan,
            "gs",
            ctx,
            solve,
            index,
            skip=lambda pid: "already tried on identical evidence" if (index, kb_id, pid) in run.tried else "",
        )
        part.answer = _first_result(gs_attempts, "gs") or _first_status(gs_attempts, Status.NO_CONTEXT)
        if part.answer is None or part.answer.status is not Status.SUCCESS:
            return part
        val_attempts = yield from self._stage(
            run, plan, "val", ctx, lambda p, c: p.validate(c, intent, evidence, part.answer), index
        )
        verdict = _first(val_attempts, "val")
        if verdict is not None:
            part.verdict = verdict[1]
            yield from self._emit(
                run,
                Validated(
                    plugin=verdict[0],
                    status=verdict[1].status.value,
                    reason=verdict[1].reason,
                    revision=plan.revision,
                    intent_index=index,
                ),
            )
        return part

    def _retrieve(
        self, run: _RunState, plugin: KnowledgePlugin, ctx: RunContext, index: int, intent: Intent
    ) -> KbResult:
        """kb results are deterministic per view and intent, so a replan reuses them instead of re-ranking."""
        excluded = run.request.excluded_units
        key = (index, plugin.id, excluded)
        if key not in run.kb_cache:
            narrowed = replace(ctx, view=ctx.view.without(excluded)) if excluded else ctx
            run.kb_cache[key] = plugin.retrieve(narrowed, intent)
        return run.kb_cache[key]

    def _emit(self, run: _RunState, event) -> Generator[object, None, None]:
        """Yield one event, then take what a debugger changed while the generator was held there."""
        yield run.stamp(event)
        if run.steering is None:
            return
        while changes := run.steering.take():
            for intervention in changes:
                run.request = apply(run.request, intervention)
                yield run.stamp(_intervened(intervention, live=True))
        if run.steering.cancelled:
            raise _Cancelled

    @staticmethod
    def _candidates(run: _RunState, plan: Plan, stage: str) -> list[str]:
        """The stage's candidates under the request as it is now (a pin first)."""
        candidates = list(plan.stages.get(stage, ()))
        pinned = run.request.pins.get(stage)
        if pinned:
            candidates = [pinned] + [pid for pid in candidates if pid != pinned]
        return candidates

    def _queue(self, run: _RunState, plan: Plan, stage: str, done: set[str], skip) -> list[str]:
        """The stage's candidates still to try (pins first, no exclusions, nothing `skip` gives a reason for)."""
        return [
            pid
            for pid in self._candidates(run, plan, stage)
            if pid not in done and pid not in run.request.excluded and not skip(pid)
        ]

    @staticmethod
    def _not_called(run: _RunState, plugin_id: str, skip, stage: str, accepted_by: str | None) -> str:
        """Why a candidate the stage ended without calling was not called."""
        if plugin_id in run.request.excluded:
            return "excluded by the user"
        if why := skip(plugin_id):
            return why
        if accepted_by:
            return f"not reached: {accepted_by} {_ACCEPTED_AS[stage]}"
        return "not reached"

    @staticmethod
    def _skipped_now(run: _RunState, stage: str, plugin_id: str, done: set[str], skip) -> str:
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

    def _stage(self, run, plan, stage, ctx, call, index=0, skip=lambda pid: "") -> Events:
        """Try the stage's candidates in plan order until one is accepted; level-1 backtrack between them.

        `skip(plugin_id)` gives a reason not to call a candidate ("" to call it). Every candidate
        that ends the stage uncalled gets a "skipped" AttemptFinished saying why.
        """
        attempts: list[tuple[str, Result]] = []
        yield from self._emit(run, StageStarted(stage=stage, revision=plan.revision, intent_index=index))
        stage_started = run.clock()
        done: set[str] = set()
        reported: set[str] = set()
        accepted_by: str | None = None
        while queue := self._queue(run, plan, stage, done, skip):
            plugin_id = queue[0]
            yield from self._emit(
                run, AttemptStarted(stage=stage, plugin=plugin_id, revision=plan.revision, intent_index=index)
            )
            if why := self._skipped_now(run, stage, plugin_id, done, skip):
                if not why.startswith("not yet"):
                    reported.add(plugin_id)
                yield from self._emit(
                    run,
                    AttemptFinished(
                        stage=stage,
                        plugin=plugin_id,
                        status="skipped",
                        reason=why,
                        intent_index=index,
                        revision=plan.revision,
                    ),
                )
                continue
            done.add(plugin_id)
            ctx.request = run.request
            result, ms, uncharged, shards = self._call(run, stage, plugin_id, call, ctx)
            yield from self._emit(
                run,
                AttemptFinished(
                    stage=stage,
                    plugin=plugin_id,
                    status=result.status.value,
                    reason=result.reason,
                    ms=ms,
                    intent_index=index,
                    revision=plan.revision,
                    uncharged=uncharged,
                    shards=shards,
                ),
            )
            for event in getattr(result, "trace", ()):
                yield from self._emit(run, event.model_copy(update={"intent_index": index}))
            attempts.append((plugin_id, result))
            if result.status in _ACCEPT[stage]:
                accepted_by = plugin_id
                break
            remaining = self._queue(run, plan, stage, done, skip)
            if remaining:
                yield from self._emit(
                    run,
                    Backtracked(
                        level=1,
                        stage=stage,
                        plugin=plugin_id,
                        revision=plan.revision,
                        reason=f"{plugin_id} {result.status.value}: {result.reason or 'no reason given'}; trying {remaining[0]}",
                    ),
                )
        for plugin_id in self._candidates(run, plan, stage):
            if plugin_id not in done and plugin_id not in reported:
                yield from self._emit(
                    run,
                    AttemptFinished(
                        stage=stage,
                        plugin=plugin_id,
                        status="skipped",
                        intent_index=index,
                        revision=plan.revision,
                        reason=self._not_called(run, plugin_id, skip, stage, accepted_by),
                    ),
                )
        run.timings[stage] = run.timings.get(stage, 0.0) + (run.clock() - stage_started) * 1000
        return attempts

    def _call(
        self, run: _RunState, stage: str, plugin_id: str, call, ctx: RunContext
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
        if "thread" in outcome:
            run.guard.abandon(outcome["thread"], token)
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


def _user_intent(cnl: str) -> SdResult:
    """The user's own Intent CNL, checked by the same parser as every seed detector's output."""
    intents, diagnostics = parse_intents(cnl, file="<user intent>")
    errors = [d.format() for d in diagnostics if d.is_error]
    if errors or not intents:
        reason = errors[0] if errors else "no intent statement"
        return SdResult(status=Status.ERROR, reason=f"the user's intent is invalid: {reason}", intent_cnl=cnl)
    return SdResult(status=Status.SUCCESS, reason="intent written by the user", intent_cnl=cnl, intents=tuple(intents))


def _intervened(intervention: Intervention, *, live: bool) -> Intervened:
    note = intervention.describe() + ("" if live else " (applied from the start of this re-run)")
    return Intervened(
        change=intervention.kind, target=intervention.target, stage=intervention.stage, live=live, note=note
    )


def _first(attempts: list[tuple[str, Result]], stage: str) -> tuple[str, Result] | None:
    return next(((pid, r) for pid, r in attempts if r.status in _ACCEPT[stage]), None)


def _first_result(attempts: list[tuple[str, Result]], stage: str):
    found = _first(attempts, stage)
    return found[1] if found else None


def _first_status(attempts: list[tuple[str, Result]], status: Status):
    return next((r for _, r in attempts if r.status is status), None)


def _best_insufficient(attempts: list[tuple[str, Result]]) -> KbResult | None:
    """The weak evidence to answer from when no kb plugin was sufficient: the one that kept most."""
    usable = [r for _, r in attempts if r.status is Status.INSUFFICIENT and r.outcome is not None]
    return max(usable, key=lambda r: len(r.evidence_ids), default=None)


def _plan_event(plan: Plan) -> PlanBuilt:
    return PlanBuilt(
        revision=plan.revision,
        planner=plan.planner,
        stages=tuple(
            PlanStage(stage=stage, candidates=candidates, reasons=plan.reasons.get(stage, ()))
            for stage, candidates in plan.stages.items()
        ),
        reasons=plan.notes,
    )
