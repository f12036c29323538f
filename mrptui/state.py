"""The explorer's view model: a pure function of the first k trace events.

`reduce(events[:k])` (or `apply(state, event)` one event at a time) gives everything the panels
show at cursor k: plan revisions, intents, the attempts timeline with backtracks inline, evidence,
proofs, validations and the answer. No Textual here, so every event kind is tested without an app.
`RunRecord` is one run as the app keeps it. Breakpoints are in mrptui/breakpoints.py, the session
seam (`SessionLike`, `NullSession`) in mrptui/session_seam.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from core.kernel.contract import Request
from core.kernel.events import (
    AnswerReady,
    AttemptFinished,
    AttemptStarted,
    Backtracked,
    Event,
    IntentDetected,
    Intervened,
    PlanBuilt,
    PlanStage,
    ProofsFound,
    RetrievalScored,
    RunFinished,
    RunStarted,
    ShardTiming,
    StageStarted,
    Validated,
)
from core.units import Intent

RowKind = Literal["plan", "attempt", "backtrack", "intervention"]

BACKTRACK_LABELS: dict[int, tuple[str, str]] = {
    1: ("↩", "next candidate"),
    2: ("⟲", "replan"),
    3: ("≈", "weak answer"),
}


@dataclass(frozen=True)
class PlanView:
    """One plan revision; a replan keeps the old one, marked superseded with the reason."""

    revision: int
    planner: str
    stages: tuple[PlanStage, ...]
    reasons: tuple[str, ...] = ()
    superseded: bool = False
    superseded_reason: str = ""


@dataclass(frozen=True)
class TimelineRow:
    """One row of the attempts timeline: a plan revision, an attempt, or a backtrack."""

    kind: RowKind
    index: int  # position in the event stream (0-based) of the event that created the row
    stage: str = ""
    plugin: str = ""
    status: str = ""  # attempts: "running" until AttemptFinished, then its status
    reason: str = ""
    ms: float | None = None
    revision: int = 0
    intent_index: int = 0
    level: int | None = None
    shards: tuple[ShardTiming, ...] = ()  # attempts on a cluster: per shard its ms, or that it was silent

    @property
    def outcome(self) -> str:
        """The reason as the panels show it: a candidate that was not called says so
        ("skipped: excluded by the user", "not reached: kb-balanced was sufficient")."""
        if self.status == "skipped" and self.reason and not self.reason.startswith("not "):
            return f"skipped: {self.reason}"
        return self.reason

    @property
    def backtrack_head(self) -> str:
        """What a backtrack row is about, naming its plugin and plan revision: "next candidate after
        kb-fast (r1)", "replan after planner-default r0", "weak answer from r0 (planner-default)"."""
        _, what = BACKTRACK_LABELS.get(self.level or 0, ("?", "backtrack"))
        if self.level == 3:
            return f"{what} from r{self.revision}" + (f" ({self.plugin})" if self.plugin else "")
        if self.level == 2:
            return f"{what} after {self.plugin or 'plan'} r{self.revision}"
        return f"{what} after {self.plugin or self.stage} (r{self.revision})"

    @property
    def label(self) -> str:
        """A one-line description, as copied to the clipboard."""
        if self.kind == "backtrack":
            symbol, what = BACKTRACK_LABELS.get(self.level or 0, ("?", "backtrack"))
            reason = self.reason.removeprefix(f"{what}:").strip()
            return f"{symbol} L{self.level} {self.backtrack_head}: {reason}"
        if self.kind == "plan":
            return f"plan r{self.revision} by {self.plugin}"
        if self.kind == "intervention":
            return f"✎ {self.reason}"
        tail = f": {self.reason}" if self.reason else ""
        return f"{self.stage} {self.plugin} {self.status}{tail}"


@dataclass(frozen=True)
class ViewState:
    """Everything the main screen shows after the first `k` events of one run."""

    k: int = 0
    question: str = ""
    caller_tags: tuple[str, ...] = ()
    caller_region: str | None = None
    as_of: str = ""
    kb_version: str = ""
    pins: tuple[tuple[str, str], ...] = ()
    excluded: tuple[str, ...] = ()
    plans: tuple[PlanView, ...] = ()
    revision: int = 0
    current_stage: str | None = None
    current_plugin: str | None = None
    current_intent: int = 0
    intent_plugin: str = ""
    intent_cnl: str = ""
    intents: tuple[Intent, ...] = ()
    context_unit_ids: tuple[str, ...] = ()
    rows: tuple[TimelineRow, ...] = ()
    retrievals: tuple[RetrievalScored, ...] = ()
    proofs_all: tuple[ProofsFound, ...] = ()
    validations: tuple[Validated, ...] = ()
    backtracks: tuple[Backtracked, ...] = ()
    answer: AnswerReady | None = None
    finished: RunFinished | None = None
    status: str = "idle"  # idle, running, then the RunFinished status
    last_event: Event | None = None

    # -- derived views ------------------------------------------------------------------------

    @property
    def plan(self) -> PlanView | None:
        """The current (latest) plan revision."""
        return self.plans[-1] if self.plans else None

    @property
    def evidence(self) -> dict[int, RetrievalScored]:
        """The latest RetrievalScored per intent index."""
        latest: dict[int, RetrievalScored] = {}
        for scored in self.retrievals:
            latest[scored.intent_index] = scored
        return latest

    @property
    def evidence_by_plugin(self) -> dict[str, tuple[RetrievalScored, ...]]:
        grouped: dict[str, list[RetrievalScored]] = {}
        for scored in self.retrievals:
            grouped.setdefault(scored.plugin, []).append(scored)
        return {plugin: tuple(items) for plugin, items in grouped.items()}

    @property
    def latest_retrieval(self) -> RetrievalScored | None:
        return self.retrievals[-1] if self.retrievals else None

    @property
    def proofs(self) -> ProofsFound | None:
        """The latest ProofsFound."""
        return self.proofs_all[-1] if self.proofs_all else None

    @property
    def attempts(self) -> tuple[TimelineRow, ...]:
        return tuple(row for row in self.rows if row.kind == "attempt")

    @property
    def done(self) -> bool:
        return self.finished is not None

    def attempt_row(self, revision: int, stage: str, plugin: str) -> TimelineRow | None:
        """The last attempt row of `plugin` in `stage` under plan `revision`, if any."""
        found = None
        for row in self.rows:
            if row.kind == "attempt" and row.revision == revision and row.stage == stage and row.plugin == plugin:
                found = row
        return found

    def attempt_status(self, revision: int, stage: str, plugin: str) -> str | None:
        """The status of the last attempt of `plugin` in `stage` under plan `revision`, if any."""
        row = self.attempt_row(revision, stage, plugin)
        return row.status if row else None


def _finish_attempt(rows: tuple[TimelineRow, ...], event: AttemptFinished) -> tuple[TimelineRow, ...]:
    """Close the last running row of the same stage, plugin and intent (or append a lone row)."""
    for position in range(len(rows) - 1, -1, -1):
        row = rows[position]
        if (
            row.kind == "attempt"
            and row.status == "running"
            and row.stage == event.stage
            and row.plugin == event.plugin
            and row.intent_index == event.intent_index
        ):
            ms = None if event.status == "skipped" else event.ms  # nothing was called, nothing timed
            done = replace(row, status=event.status, reason=event.reason, ms=ms, shards=event.shards)
            return rows[:position] + (done,) + rows[position + 1 :]
    return rows + (
        TimelineRow(
            kind="attempt",
            index=-1,
            stage=event.stage,
            plugin=event.plugin,
            status=event.status,
            reason=event.reason,
            ms=None if event.status == "skipped" else event.ms,
            intent_index=event.intent_index,
            revision=event.revision,
            shards=event.shards,
        ),
    )


def apply(state: ViewState, event: Event) -> ViewState:
    """The state after one more event. Pure: `state` is never changed."""
    index = state.k
    state = replace(state, k=state.k + 1, last_event=event)
    match event:
        case RunStarted():
            return replace(
                ViewState(k=state.k, last_event=event),
                question=event.question,
                caller_tags=event.caller_tags,
                caller_region=event.caller_region,
                as_of=event.as_of,
                kb_version=event.kb_version,
                pins=tuple(sorted(event.pins.items())),
                excluded=tuple(sorted(event.excluded)),
                status="running",
            )
        case PlanBuilt():
            reason = (
                state.backtracks[-1].reason if state.backtracks and state.backtracks[-1].level == 2 else "replanned"
            )
            old = tuple(
                plan if plan.superseded else replace(plan, superseded=True, superseded_reason=reason)
                for plan in state.plans
            )
            plan = PlanView(event.revision, event.planner, event.stages, event.reasons)
            row = TimelineRow(
                kind="plan", index=index, plugin=event.planner, revision=event.revision, reason="; ".join(event.reasons)
            )
            return replace(
                state,
                plans=old + (plan,),
                revision=event.revision,
                rows=state.rows + (row,),
                current_stage=None,
                current_plugin=None,
            )
        case StageStarted():
            return replace(
                state,
                current_stage=event.stage,
                current_plugin=None,
                current_intent=event.intent_index,
                revision=event.revision,
            )
        case AttemptStarted():
            row = TimelineRow(
                kind="attempt",
                index=index,
                stage=event.stage,
                plugin=event.plugin,
                status="running",
                revision=event.revision,
                intent_index=event.intent_index,
            )
            return replace(
                state,
                current_stage=event.stage,
                current_plugin=event.plugin,
                current_intent=event.intent_index,
                rows=state.rows + (row,),
            )
        case IntentDetected():
            return replace(
                state,
                intent_plugin=event.plugin,
                intent_cnl=event.cnl,
                intents=event.intents,
                context_unit_ids=event.context_unit_ids,
            )
        case RetrievalScored():
            return replace(state, retrievals=state.retrievals + (event,))
        case ProofsFound():
            return replace(state, proofs_all=state.proofs_all + (event,))
        case AttemptFinished():
            return replace(state, rows=_finish_attempt(state.rows, event))
        case Intervened():
            row = TimelineRow(
                kind="intervention",
                index=index,
                stage=event.stage or "",
                plugin="you",
                status="live" if event.live else "re-run",
                reason=event.note,
                revision=state.revision,
            )
            return replace(state, rows=state.rows + (row,))
        case Backtracked():
            row = TimelineRow(
                kind="backtrack",
                index=index,
                stage=event.stage,
                plugin=event.plugin or "",
                status="backtrack",
                reason=event.reason,
                revision=state.revision if event.revision is None else event.revision,
                level=event.level,
            )
            return replace(state, rows=state.rows + (row,), backtracks=state.backtracks + (event,))
        case Validated():
            return replace(state, validations=state.validations + (event,))
        case AnswerReady():
            return replace(state, answer=event)
        case RunFinished():
            return replace(state, finished=event, status=event.status, current_stage=None, current_plugin=None)
    return state


def reduce(events: Iterable[Event], state: ViewState | None = None) -> ViewState:
    """Fold events into a state: `reduce(events[:k])` is the view at cursor k."""
    state = state or ViewState()
    for event in events:
        state = apply(state, event)
    return state


PaneName = Literal["plan", "attempts", "evidence", "proofs", "answer"]


def stale_panes(state: ViewState, before: ViewState | None) -> frozenset[PaneName]:
    """The panes a starting run has nothing for yet, which keep showing `before` (the previous
    run's state) marked stale: each is replaced once, when the run has its own content for it."""
    if before is None:
        return frozenset()
    own: dict[PaneName, bool] = {
        "plan": state.plan is not None,
        "attempts": bool(state.rows),
        "evidence": bool(state.retrievals),
        "proofs": state.proofs is not None,
        "answer": state.answer is not None,
    }
    return frozenset(pane for pane, shown in own.items() if not shown)


class StateCache:
    """States for every prefix of a growing event list, so stepping back and forth is free."""

    def __init__(self) -> None:
        self._states: list[ViewState] = [ViewState()]

    def at(self, events: Sequence[Event], k: int) -> ViewState:
        k = max(0, min(k, len(events)))
        while len(self._states) <= k:
            n = len(self._states)
            self._states.append(apply(self._states[-1], events[n - 1]))
        return self._states[k]


def trace_unit_ids(state: ViewState) -> list[tuple[str, str]]:
    """Every unit id a run names (candidates, context, proofs, citations), sorted, with its role
    when a retrieval reported one: what a replay without the KB can still list."""
    roles: dict[str, str] = {}
    for scored in state.retrievals:
        for candidate in scored.candidates:
            roles.setdefault(candidate.id, candidate.role)

    def proof_units(node) -> Iterator[str]:
        yield from node.units
        for premise in node.premises:
            yield from proof_units(premise)

    ids = set(roles) | set(state.context_unit_ids)
    for found in state.proofs_all:
        for proof in found.proofs:
            ids.update(proof_units(proof))
    if state.answer is not None:
        ids.update(state.answer.evidence_ids)
        for part in state.answer.parts:
            ids.update(part.cited_ids)
    return [(unit_id, roles.get(unit_id, "")) for unit_id in sorted(ids)]


# -- the run as the app keeps it --------------------------------------------------------


@dataclass(eq=False)
class RunRecord:
    """One run as the app keeps it: what was asked and the events seen so far (growing while live)."""

    run_id: int
    request: Request | None
    events: list[Event] = field(default_factory=list)
    done: bool = False
    error: str = ""
    held: str = ""  # where the live engine is held ("before kb-balanced (stage kb, revision 1)"), or ""
    stopped: str = ""  # a run a newer one replaced before it finished: "stopped while held …"
    pending: tuple[str, ...] = ()  # changes made while held, applied when the run goes on
    notes: tuple[str, ...] = ()  # what the user undid on this run (the timeline shows each as a ✎ you row)
    cache: StateCache = field(default_factory=StateCache, repr=False)

    def state(self, k: int) -> ViewState:
        return self.cache.at(self.events, k)

    @property
    def final(self) -> ViewState:
        return self.state(len(self.events))

    @property
    def question(self) -> str:
        if self.request is not None:
            return self.request.question
        first = self.events[0] if self.events else None
        return first.question if isinstance(first, RunStarted) else ""
