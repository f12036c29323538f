"""The trace-event vocabulary: the one stream the TUI, the JSON CLI, evaluation and tests consume.

Events carry unit ids and scores, never unit text: text is looked up in the caller's permitted
view, so a trace cannot leak what the caller may not see.
"""

import functools
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic.alias_generators import to_camel

from core.infra.config import Budgets
from core.infra.diagnostics import Code, Diagnostic, Severity
from core.infra.safe_io import FileTooLarge, Marked, Protected, UnsafePath, atomic_write_text, open_regular
from core.kernel.candidates import CandidateRows
from core.units import Intent

# Traces above this are refused unread. An `ask` trace is a few hundred KB; 700 scored candidates
# with their BM25 terms are about 2 MB. Candidate-heavy traces take up to ~10x their size in
# memory once read (a 330 MB one took 3.8 GB and 35 s), so this keeps a replay under ~1 GB.
MAX_TRACE_BYTES = 64_000_000


AnswerStatus = Literal["grounded", "weak", "no-context"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class FusionSettings(_Model):
    """The fusion a kb plugin ranked with: its profile's weights and bonus over the config's."""

    method: str  # weighted or rrf: what `score` ranks and cuts by
    weights: dict[str, float]  # of the weighted sum (`fused`)
    agreement_bonus: float
    rrf_k: int
    rrf_weights: dict[str, float]


class CutSettings(_Model):
    """The cut-offs a kb plugin applied in this run: its profile's, and the top score the gap is of."""

    min_score: float
    gap_threshold: float
    max_results: int
    top_score: float


class HdcSettings(_Model):
    """The HDC lane's numbers in this run: its floor and pool, field weights and claim window."""

    lane_min_score: float
    lane_pool: int
    field_weights: dict[str, float]
    claim_window: int


class ShardTiming(_Model):
    """One shard's part in a plugin call whose KB was searched on a cluster (core/kb/sharding):
    the ms its tasks ran on a worker, summed over the call, or that it did not answer."""

    shard: int  # 1-based, as "shard 3 of 4" names it
    of: int
    ms: float = 0.0
    answered: bool = True


class ProofNode(_Model):
    """A fact and how it was obtained: a base fact from units, or a rule over premises."""

    fact: str
    confidence: float
    steps: int = 0
    score: float | None = None
    rule: str | None = None
    weight: float | None = None
    units: tuple[str, ...] = ()
    premises: tuple["ProofNode", ...] = ()


class RuleStat(_Model):
    rule: str
    fired: int
    derived: tuple[str, ...] = ()
    bindings: tuple[dict[str, str], ...] = ()
    first_unmatched_premise: int | None = None


class PlanStage(_Model):
    stage: str
    candidates: tuple[str, ...]
    reasons: tuple[str, ...] = ()


class AnswerDetail(_Model):
    """How a short answer was found and checked (core/question/answer_types.py, core/answer/support.py): the type
    the question asks for, the lead taken from the cited sentence, whether the support check
    passed and why not, the lexicon links and pronoun resolutions it relied on."""

    answer_type: str
    lead: str = ""
    supported: bool = False
    support: str = ""
    links: tuple[str, ...] = ()
    resolved: tuple[str, ...] = ()


class AnswerPart(_Model):
    """One intent's answer: its text, and `lead`, the short answer a grounded part asserts ("" when
    it asserts none or only quotes evidence), as the solver built it."""

    intent_index: int
    target: str
    answer: str
    status: AnswerStatus
    cited_ids: tuple[str, ...] = ()
    evidence_plugin: str | None = None
    detail: AnswerDetail | None = None
    lead: str = ""


class MemoryUse(_Model):
    """A memory record offered to a request (core/memory), with seed 001's score parts.

    Only the asking caller's own records are offered, and only while every unit they cite is in
    that caller's view with the content it had; the question and lead are what that caller asked
    and was told."""

    id: str
    turn: int = 0
    scope: Literal["session", "user", "global"]
    kind: Literal["turn", "note", "summary"]
    question: str
    lead: str = ""
    entity: str = ""
    unit_ids: tuple[str, ...] = ()
    # The content digest of each cited unit as the turn saw it (core/memory/cited.py).
    unit_digests: tuple[str, ...] = ()
    sim: float
    recency: float
    scope_weight: float
    quality: float
    score: float


class _Event(_Model):
    seq: int = 0


class RunStarted(_Event):
    kind: Literal["run_started"] = "run_started"
    question: str
    caller_tags: tuple[str, ...] = ()
    caller_region: str | None = None
    as_of: str
    kb_version: str
    pins: dict[str, str] = Field(default_factory=dict)
    excluded: tuple[str, ...] = ()
    excluded_units: tuple[str, ...] = ()
    intent_cnl: str | None = None
    # The memory records offered to this request, best first (empty without a conversation).
    memory: tuple[MemoryUse, ...] = ()
    # Records not offered because a unit they cite changed or left the view, each said in a line.
    memory_withheld: tuple[str, ...] = ()


class Intervened(_Event):
    """A user changed the run: live at a held point, or from the start of a re-run (`live` False)."""

    # Built on first use: only a steered run (the explorer, `--step`) makes one (issue 41).
    model_config = ConfigDict(defer_build=True)
    kind: Literal["intervened"] = "intervened"
    change: Literal["exclude_plugin", "pin_plugin", "exclude_unit", "edit_intent"]
    target: str
    stage: str | None = None
    live: bool
    note: str


class PlanBuilt(_Event):
    kind: Literal["plan_built"] = "plan_built"
    revision: int
    planner: str
    stages: tuple[PlanStage, ...]
    reasons: tuple[str, ...] = ()


class StageStarted(_Event):
    kind: Literal["stage_started"] = "stage_started"
    stage: str
    revision: int
    intent_index: int = 0


class AttemptStarted(_Event):
    kind: Literal["attempt_started"] = "attempt_started"
    stage: str
    plugin: str
    revision: int
    intent_index: int = 0


class IntentDetected(_Event):
    kind: Literal["intent_detected"] = "intent_detected"
    plugin: str
    cnl: str
    intents: tuple[Intent, ...]
    context_unit_ids: tuple[str, ...] = ()
    # What a follow-up left out, completed from memory ("it → Orion, from turn 1, memory score 0.82").
    resolved: tuple[str, ...] = ()
    # Pronouns memory left as asked, and why ("could not tell who 'she' is: Anna or her mother …").
    unresolved: tuple[str, ...] = ()
    memory_used: tuple[str, ...] = ()


class RetrievalScored(_Event):
    kind: Literal["retrieval_scored"] = "retrieval_scored"
    plugin: str
    intent_index: int = 0
    act: str
    query_terms: tuple[str, ...]
    lanes: tuple[str, ...]
    escalated: bool = False
    sufficient: bool
    total_candidates: int
    # Synonyms applied to the question: `notebook → laptop (sample_kb/synonyms.txt:3)`.
    synonyms: tuple[str, ...] = ()
    candidates: CandidateRows
    evidence_ids: tuple[str, ...]
    fusion: FusionSettings | None = None  # None in a trace recorded before fusion was explained
    # None in a trace recorded before the run's cut-offs and HDC numbers were (the explorer then
    # explains with the session's config and says so).
    cuts: CutSettings | None = None
    hdc: HdcSettings | None = None
    # The shards the view's KB was searched on (0: one process); each candidate names its own.
    shards: int = 0
    # In a conversation: the memory record whose cited units placed the candidates, and the
    # priors it gave (core/memory/position.py); empty outside one.
    position_anchor: str = ""
    position: str = ""


# How a closure's `stop_reason` names a budget: `budget: maxDerivedFacts=64`.
_BUDGET_PREFIX = "budget: "
_DEPTH = f"{_BUDGET_PREFIX}maxDepth="


class ProofsFound(_Event):
    kind: Literal["proofs_found"] = "proofs_found"
    plugin: str
    intent_index: int = 0
    stop_reason: str
    seeds: tuple[str, ...] = ()
    rounds: int = 0
    derived: int = 0
    proofs: tuple[ProofNode, ...] = ()
    rule_stats: tuple[RuleStat, ...] = ()

    @property
    def budget_stop(self) -> str:
        """The budget that cut the closure short, as `stop_reason` names it ("maxClosureMb=1024",
        core/retrieval/thinkingdb/budget.py), or "" when none did. A `maxDepth` stop is not one:
        it is the reach the rules ask for (hops and rounds from the seeds), met by ordinary
        questions, and the answer is what that reach proves."""
        if not self.stop_reason.startswith(_BUDGET_PREFIX) or self.stop_reason.startswith(_DEPTH):
            return ""
        return self.stop_reason.removeprefix(_BUDGET_PREFIX)


# The engine's budgets (engine.json `budgets`) as reasons name them: "(budgets.maxLlmCallsPerRequest)",
# "(pluginTimeoutMs)", "llmDeadlineMs (60000 ms) passed".
_ENGINE_BUDGET = re.compile(r"\b(?:" + "|".join(to_camel(name) for name in Budgets.model_fields) + r")\b")


def names_engine_budget(reason: str) -> bool:
    """Whether an attempt's reason says an engine budget stopped or refused the call (the LLM
    calls left, a timeout, the request's memory)."""
    return bool(_ENGINE_BUDGET.search(reason))


class AttemptFinished(_Event):
    """A plugin call's outcome; status "skipped" (no AttemptStarted before it, ms 0) is a candidate
    the stage did not call, with the reason why (excluded, already tried, not reached)."""

    kind: Literal["attempt_finished"] = "attempt_finished"
    stage: str
    plugin: str
    status: str
    reason: str = ""
    ms: float = 0.0
    intent_index: int = 0
    revision: int = 0
    # Time within `ms` spent on work not the plugin's own (a lazy index build), not charged to
    # its pluginTimeoutMs, and what it was; empty when there was none.
    uncharged: str = ""
    # Per shard, when the call searched a KB on a cluster: its ms on a worker, or that it did not
    # answer (the call is then an error that names it: "shard 3 of 4 did not answer …").
    shards: tuple[ShardTiming, ...] = ()


class Backtracked(_Event):
    """L1: `plugin` failed in `stage`; L2: the plan by planner `plugin` was not accepted; L3: the
    answer comes from plan `revision` (by planner `plugin`). `revision` is the plan it concerns."""

    kind: Literal["backtracked"] = "backtracked"
    level: Literal[1, 2, 3]
    stage: str
    plugin: str | None = None
    reason: str
    revision: int | None = None


class Validated(_Event):
    kind: Literal["validated"] = "validated"
    plugin: str
    status: str
    reason: str = ""
    revision: int = 0
    intent_index: int = 0


class AnswerReady(_Event):
    kind: Literal["answer_ready"] = "answer_ready"
    answer: str
    status: AnswerStatus
    evidence_ids: tuple[str, ...] = ()
    parts: tuple[AnswerPart, ...] = ()


class RunFinished(_Event):
    kind: Literal["run_finished"] = "run_finished"
    status: Literal["grounded", "weak", "no-context", "failed", "cancelled"]
    replans: int = 0
    timings_ms: dict[str, float] = Field(default_factory=dict)


Event = Annotated[
    RunStarted
    | PlanBuilt
    | StageStarted
    | AttemptStarted
    | IntentDetected
    | RetrievalScored
    | ProofsFound
    | AttemptFinished
    | Backtracked
    | Validated
    | AnswerReady
    | RunFinished
    | Intervened,
    Field(discriminator="kind"),
]


@functools.cache
def _event_adapter() -> TypeAdapter[Event]:
    # Built on first read of a trace: validating the whole union costs every run (the CLI's
    # `ask` included) ~20 ms at import, and only replay and diff read traces back.
    return TypeAdapter(Event)


def to_json_line(event: _Event) -> str:
    return event.model_dump_json()


def from_json_line(line: str) -> Event:
    return _event_adapter().validate_json(line)


def write_trace(events: Iterable[_Event], path: Path, protected: Protected | None = None) -> None:
    """Write a JSON Lines trace atomically (`core.infra.safe_io`): a half-written file never replaces a
    good one, and a folder, device, link, `protected` file or a file that is not a trace (a
    user's own) is refused with `UnsafePath`. A trace holds what the caller was shown and the
    run's internals: readable by its owner only (0600)."""
    atomic_write_text(path, (to_json_line(event) + "\n" for event in events), protected, mode=0o600, ours=is_trace)


def is_trace(marked: Marked) -> bool:
    """A file a trace may replace: one that starts as every trace does (its run_started event)."""
    return _TRACE_START.match(marked.head) is not None


_TRACE_START = re.compile(rb'\{"seq":\d+,"kind":"run_started"')


def read_trace(path: Path, *, stop_at_bad_line: bool = False) -> tuple[list[Event], list[Diagnostic]]:
    """Read a saved trace line by line; a bad line becomes a diagnostic with its line number.

    A file over `MAX_TRACE_BYTES`, or anything but a regular file, is one FILE_TOO_LARGE or
    FILE_UNREADABLE error and no events. A last line cut off mid-event (a copy or a write that
    stopped early) is a warning that says where the trace stops; the events before it are kept.
    With `stop_at_bad_line` reading stops at the first bad line (its diagnostic is the last one):
    a replay shows the events up to there, in order, rather than a run with a hole in it.
    """
    file = str(path)
    try:
        handle = open_regular(path, MAX_TRACE_BYTES)
    except FileTooLarge as exc:
        return [], [Diagnostic(code=Code.FILE_TOO_LARGE, message=f"trace {exc.reason}", file=file)]
    except UnsafePath as exc:
        return [], [Diagnostic(code=Code.FILE_UNREADABLE, message=exc.reason, file=file)]
    except OSError as exc:
        return [], [Diagnostic(code=Code.FILE_UNREADABLE, message=exc.strerror or str(exc), file=file)]
    events: list[Event] = []
    problems: list[Diagnostic] = []
    read = 0
    with handle:
        # Binary lines break at line feeds only: text mode would also split at U+2028 or U+0085,
        # which JSON writers may leave raw inside a string.
        for number, raw in enumerate(handle, start=1):
            read += len(raw)
            if read > MAX_TRACE_BYTES:
                problem = FileTooLarge(path, read, MAX_TRACE_BYTES)
                return [], [Diagnostic(code=Code.FILE_TOO_LARGE, message=f"trace {problem.reason}", file=file)]
            if not raw.strip():
                continue
            try:
                events.append(from_json_line(raw.decode("utf-8")))
            except (ValidationError, ValueError) as exc:
                problems.append(_bad_line(exc, raw, number, file))
                if stop_at_bad_line:
                    break
    return events, problems


def _bad_line(exc: Exception, raw: bytes, number: int, file: str) -> Diagnostic:
    if _cut_off(exc, raw):
        return Diagnostic(
            code=Code.MALFORMED_LINE,
            message=f"the trace stops mid-event at line {number} (cut off?); the events before it are kept",
            file=file,
            line=number,
            severity=Severity.WARNING,
        )
    first = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
    return Diagnostic(code=Code.MALFORMED_LINE, message=f"not a trace event: {first}", file=file, line=number)


def _cut_off(exc: Exception, raw: bytes) -> bool:
    """A last line (no line feed) whose JSON or UTF-8 ends early: the file was cut, not forged.
    A complete line that is not an event stays an error, newline or not."""
    if raw.endswith(b"\n"):
        return False
    if isinstance(exc, UnicodeDecodeError):
        return True
    return isinstance(exc, ValidationError) and exc.errors()[0]["type"] == "json_invalid"
