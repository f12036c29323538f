"""The MRP-VM kernel: runs a plan stage by stage and yields typed trace events.

It is neutral: it orders and calls plugins, relays the events they produce, and backtracks;
retrieval, normalisation and synthesis all live in plugins.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field

from core.config import EngineConfig
from core.events import (
    AnswerPart,
    AnswerReady,
    AttemptFinished,
    AttemptStarted,
    Backtracked,
    IntentDetected,
    PlanBuilt,
    PlanStage,
    RunFinished,
    RunStarted,
    StageStarted,
    Validated,
)
from core.intent_cues import question_cues
from core.plugins.base import (
    INSUFFICIENT_PREFACE,
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
from core.plugins.planners import Plan, Planner
from core.units import Intent

Result = SdResult | KbResult | GsResult | ValResult
Events = Generator[object, None, "list[tuple[str, Result]]"]

_ACCEPT = {
    "sd": {Status.SUCCESS},
    "kb": {Status.SUCCESS},
    "gs": {Status.SUCCESS},
    "val": {Status.ACCEPTED, Status.REJECTED},
}
_RESULT_TYPES: dict[str, type] = {"sd": SdResult, "kb": KbResult, "gs": GsResult, "val": ValResult}
_PLUGIN_TYPES: dict[str, type] = {"sd": SeedDetector, "kb": KnowledgePlugin, "gs": GoalSolver, "val": Validator}
_RANK = {"grounded": 2, "weak": 1, "no-context": 0}
NO_EVIDENCE = "I found no evidence in the knowledge base for this question."


@dataclass
class _Part:
    intent: Intent
    evidence_plugin: str | None = None
    evidence: KbResult | None = None
    answer: GsResult | None = None
    verdict: ValResult | None = None

    @property
    def status(self) -> str:
        if self.answer is None or self.answer.status is not Status.SUCCESS:
            return "no-context"
        rejected = self.verdict is not None and self.verdict.status is Status.REJECTED
        sufficient = self.evidence is not None and self.evidence.status is Status.SUCCESS
        return "grounded" if sufficient and not rejected and not self.answer.weak else "weak"


@dataclass
class _Revision:
    revision: int
    parts: list[_Part] = field(default_factory=list)
    failure: str = ""

    @property
    def score(self) -> tuple[int, ...]:
        return tuple(sorted((_RANK[p.status] for p in self.parts), reverse=True)) if self.parts else (-1,)

    @property
    def accepted(self) -> bool:
        return bool(self.parts) and all(p.status == "grounded" for p in self.parts)

    def why_not_accepted(self) -> str:
        if self.failure:
            return self.failure
        for part in self.parts:
            if part.verdict is not None and part.verdict.status is Status.REJECTED:
                return f"{part.verdict.reason or 'the validator rejected the answer'}"
            if part.status != "grounded":
                return f"the answer to {part.intent.target!r} is {part.status}"
        return "no answer"


@dataclass
class _RunState:
    request: Request
    view: object
    services: object
    llm_calls_left: int
    clock: Callable[[], float]
    seq: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    tried: set[tuple[int, str, str]] = field(default_factory=set)
    kb_cache: dict[tuple[int, str], KbResult] = field(default_factory=dict)

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

    def run(self, request: Request, view, kb_version: str = "") -> Iterator[object]:
        """Yield the trace of one request; the answer is the second-to-last event."""
        run = _RunState(
            request=request,
            view=view,
            services=self.services,
            llm_calls_left=self.config.budgets.max_llm_calls_per_request,
            clock=self.clock,
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
            )
        )
        cues = question_cues(request.question)
        revisions: list[_Revision] = []
        why = ""
        planners = self.planner_sequence(request)
        for number, planner in enumerate(planners):
            plan = planner.plan(request, cues, self.registry, number, why)
            yield run.stamp(_plan_event(plan))
            revision = yield from self._revision(run, plan)
            revisions.append(revision)
            if revision.accepted:
                break
            why = revision.why_not_accepted()
            if number + 1 < len(planners):
                yield run.stamp(Backtracked(level=2, stage="plan", reason=f"{why}; replanning with {planners[number + 1].id}"))
        best = max(revisions, key=lambda r: (r.score, -r.revision))
        if not best.accepted:
            yield run.stamp(
                Backtracked(
                    level=3,
                    stage="answer",
                    reason=f"no plan revision was fully grounded ({revisions[-1].why_not_accepted()}); "
                    f"answering with the best result, from revision {best.revision}",
                )
            )
        answer = _answer_event(best)
        yield run.stamp(answer)
        run.timings["total"] = (self.clock() - started) * 1000
        yield run.stamp(RunFinished(status=answer.status, replans=len(revisions) - 1, timings_ms=run.timings))

    def _revision(self, run: _RunState, plan: Plan) -> Generator[object, None, _Revision]:
        revision = _Revision(plan.revision)
        ctx = RunContext(request=run.request, view=run.view, services=run.services, llm_calls_left=run.llm_calls_left)
        attempts = yield from self._stage(run, plan, "sd", ctx, lambda p: p.detect(ctx))
        seed = _first(attempts, "sd")
        if seed is None:
            revision.failure = "no seed detector produced an intent"
            return revision
        plugin_id, sd = seed
        yield run.stamp(
            IntentDetected(
                plugin=plugin_id,
                cnl=sd.intent_cnl,
                intents=sd.intents,
                context_unit_ids=tuple(u.id for u in sd.context_units),
            )
        )
        if sd.context_units:
            ctx.view = run.view.with_extra(sd.context_units)
        for index, intent in enumerate(sd.intents):
            part = yield from self._solve_intent(run, plan, ctx, index, intent)
            revision.parts.append(part)
        return revision

    def _solve_intent(self, run: _RunState, plan: Plan, ctx: RunContext, index: int, intent: Intent):
        part = _Part(intent)
        kb_attempts = yield from self._stage(run, plan, "kb", ctx, lambda p: self._retrieve(run, p, ctx, index, intent), index)
        part.evidence = _first_result(kb_attempts, "kb") or _best_insufficient(kb_attempts)
        kb_id = next((pid for pid, r in kb_attempts if r is part.evidence), "")
        part.evidence_plugin = kb_id or None
        evidence = part.evidence or KbResult(status=Status.INSUFFICIENT, reason="no kb plugin ran")

        def solve(plugin: GoalSolver) -> GsResult:
            run.tried.add((index, kb_id, plugin.id))
            return plugin.solve(ctx, intent, evidence)

        gs_attempts = yield from self._stage(
            run, plan, "gs", ctx, solve, index, skip=lambda pid: (index, kb_id, pid) in run.tried
        )
        part.answer = _first_result(gs_attempts, "gs") or _first_status(gs_attempts, Status.NO_CONTEXT)
        if part.answer is None or part.answer.status is not Status.SUCCESS:
            return part
        val_attempts = yield from self._stage(run, plan, "val", ctx, lambda p: p.validate(ctx, intent, evidence, part.answer), index)
        verdict = _first(val_attempts, "val")
        if verdict is not None:
            part.verdict = verdict[1]
            yield run.stamp(Validated(plugin=verdict[0], status=verdict[1].status.value, reason=verdict[1].reason))
        return part

    def _retrieve(self, run: _RunState, plugin: KnowledgePlugin, ctx: RunContext, index: int, intent: Intent) -> KbResult:
        """kb results are deterministic per view and intent, so a replan reuses them instead of re-ranking."""
        key = (index, plugin.id)
        if key not in run.kb_cache:
            run.kb_cache[key] = plugin.retrieve(ctx, intent)
        return run.kb_cache[key]

    def _stage(self, run, plan, stage, ctx, call, index=0, skip=lambda pid: False) -> Events:
        """Try the stage's candidates in plan order until one is accepted; level-1 backtrack between them."""
        attempts: list[tuple[str, Result]] = []
        candidates = list(plan.stages.get(stage, ()))
        yield run.stamp(StageStarted(stage=stage, revision=plan.revision, intent_index=index))
        stage_started = run.clock()
        for position, plugin_id in enumerate(candidates):
            if skip(plugin_id):
                continue
            yield run.stamp(AttemptStarted(stage=stage, plugin=plugin_id, revision=plan.revision, intent_index=index))
            ctx.llm_calls_left = run.llm_calls_left
            result, ms = self._call(run, stage, plugin_id, call)
            run.llm_calls_left -= getattr(result, "llm_calls", 0)
            yield run.stamp(
                AttemptFinished(stage=stage, plugin=plugin_id, status=result.status.value, reason=result.reason, ms=ms, intent_index=index)
            )
            for event in getattr(result, "trace", ()):
                yield run.stamp(event.model_copy(update={"intent_index": index}))
            attempts.append((plugin_id, result))
            if result.status in _ACCEPT[stage]:
                break
            remaining = [pid for pid in candidates[position + 1 :] if not skip(pid)]
            if remaining:
                yield run.stamp(
                    Backtracked(
                        level=1,
                        stage=stage,
                        plugin=plugin_id,
                        reason=f"{plugin_id} {result.status.value}: {result.reason or 'no reason given'}; trying {remaining[0]}",
                    )
                )
        run.timings[stage] = run.timings.get(stage, 0.0) + (run.clock() - stage_started) * 1000
        return attempts

    def _call(self, run: _RunState, stage: str, plugin_id: str, call) -> tuple[Result, float]:
        """Call a plugin with a timeout; exceptions, hangs and malformed results become `error` results."""
        error_type = _RESULT_TYPES[stage]
        try:
            plugin = self.registry.get(plugin_id)
        except Exception as exc:  # noqa: BLE001 - an unknown id is a result, not a crash
            return error_type(status=Status.ERROR, reason=str(exc)), 0.0
        if not isinstance(plugin, _PLUGIN_TYPES[stage]):
            return error_type(status=Status.ERROR, reason=f"{plugin_id} is not a {stage} plugin"), 0.0
        outcome: dict[str, object] = {}

        def target() -> None:
            try:
                outcome["result"] = call(plugin)
            except Exception as exc:  # noqa: BLE001 - a plugin that raises must not stop the run
                outcome["error"] = f"{type(exc).__name__}: {exc}"

        started = run.clock()
        timeout_s = self.config.budgets.plugin_timeout_ms / 1000
        worker = threading.Thread(target=target, name=f"plugin-{plugin_id}", daemon=True)
        worker.start()
        worker.join(timeout_s)
        ms = (run.clock() - started) * 1000
        if worker.is_alive():
            return error_type(status=Status.ERROR, reason=f"timed out after {self.config.budgets.plugin_timeout_ms} ms"), ms
        if "error" in outcome:
            return error_type(status=Status.ERROR, reason=f"raised {outcome['error']}"), ms
        result = outcome.get("result")
        if not isinstance(result, error_type):
            return error_type(status=Status.ERROR, reason=f"returned {type(result).__name__}, not {error_type.__name__}"), ms
        if result.status not in _allowed_statuses(error_type):
            return error_type(status=Status.ERROR, reason=f"returned status {result.status!r}, not valid for {stage}"), ms
        return result, ms


def _allowed_statuses(result_type: type) -> set[Status]:
    return {
        SdResult: {Status.SUCCESS, Status.UNSUPPORTED, Status.ERROR},
        KbResult: {Status.SUCCESS, Status.INSUFFICIENT, Status.ERROR},
        GsResult: {Status.SUCCESS, Status.NO_CONTEXT, Status.UNSUPPORTED, Status.ERROR},
        ValResult: {Status.ACCEPTED, Status.REJECTED, Status.UNSUPPORTED, Status.ERROR},
    }[result_type]


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


def _answer_event(revision: _Revision) -> AnswerReady:
    parts = []
    for index, part in enumerate(revision.parts):
        text = (part.answer.answer if part.answer else "") or NO_EVIDENCE
        if part.status == "weak" and not text.startswith(INSUFFICIENT_PREFACE):
            # The words must match the status: a weak answer says so first, whoever wrote it.
            text = f"{INSUFFICIENT_PREFACE} to answer fully; the closest answer is: {text}"
        cited = part.answer.cited_ids if part.answer else ()
        parts.append(
            AnswerPart(
                intent_index=index,
                target=part.intent.target,
                answer=text,
                status=part.status,
                cited_ids=cited,
                evidence_plugin=part.evidence_plugin,
            )
        )
    if not parts:
        reason = revision.failure or "no answer"
        return AnswerReady(answer=f"No answer: {reason}.", status="no-context")
    statuses = {p.status for p in parts}
    status = "grounded" if statuses == {"grounded"} else "no-context" if statuses == {"no-context"} else "weak"
    if len(parts) == 1:
        text = parts[0].answer
    else:
        text = "\n".join(f"{i + 1}. {p.target}\n   {p.answer}" for i, p in enumerate(parts))
        if status == "weak":
            text = f"{INSUFFICIENT_PREFACE} to answer every part:\n{text}"
    evidence = tuple(dict.fromkeys(uid for p in parts for uid in p.cited_ids))
    return AnswerReady(answer=text, status=status, evidence_ids=evidence, parts=tuple(parts))
