"""The trace-event vocabulary: the one stream the TUI, the JSON CLI, evaluation and tests consume.

Events carry unit ids and scores, never unit text: text is looked up in the caller's permitted
view, so a trace cannot leak what the caller may not see.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from core.diagnostics import Code, Diagnostic
from core.units import Intent


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TermContribution(_Model):
    term: str
    field: str
    tf: int
    idf: float
    field_weight: float
    contribution: float
    # The synonym that put this term in the query (`notebook → laptop`), or "".
    via: str = ""


class CandidateScore(_Model):
    """One unit as a kb plugin scored it, with the exact reason it was kept or cut."""

    id: str
    role: str
    rank: int
    bm25_raw: float | None = None
    bm25: float | None = None
    hdc: float | None = None
    tdb: float | None = None
    dense: float | None = None
    fused: float
    score: float
    agreement: bool = False
    role_boost: float = 1.0
    kept: bool
    cut_reason: Literal["min_score", "gap", "max_results"] | None = None
    current_turn: bool = False
    bm25_terms: tuple[TermContribution, ...] = ()
    hdc_fields: dict[str, float] = Field(default_factory=dict)
    # Question words HDC matched through a near form of a unit word, and the shared n-grams
    # (core/retrieval/hdc.py match_notes); like every event field, no unit text.
    hdc_match: tuple[str, ...] = ()


class ProofNode(_Model):
    """A fact and how it was obtained: a base fact from units, or a rule over premises."""

    fact: str
    confidence: float
    steps: int = 0
    score: float | None = None
    rule: str | None = None
    weight: float | None = None
    units: tuple[str, ...] = ()
    premises: tuple[ProofNode, ...] = ()


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


class AnswerPart(_Model):
    intent_index: int
    target: str
    answer: str
    status: Literal["grounded", "weak", "no-context"]
    cited_ids: tuple[str, ...] = ()
    evidence_plugin: str | None = None


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


class Intervened(_Event):
    """A user changed the run: live at a held point, or from the start of a re-run (`live` False)."""

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
    candidates: tuple[CandidateScore, ...]
    evidence_ids: tuple[str, ...]


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


class AttemptFinished(_Event):
    kind: Literal["attempt_finished"] = "attempt_finished"
    stage: str
    plugin: str
    status: str
    reason: str = ""
    ms: float = 0.0
    intent_index: int = 0


class Backtracked(_Event):
    kind: Literal["backtracked"] = "backtracked"
    level: Literal[1, 2, 3]
    stage: str
    plugin: str | None = None
    reason: str


class Validated(_Event):
    kind: Literal["validated"] = "validated"
    plugin: str
    status: str
    reason: str = ""


class AnswerReady(_Event):
    kind: Literal["answer_ready"] = "answer_ready"
    answer: str
    status: Literal["grounded", "weak", "no-context"]
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

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


def to_json_line(event: _Event) -> str:
    return event.model_dump_json()


def from_json_line(line: str) -> Event:
    return EVENT_ADAPTER.validate_json(line)


def write_trace(events: Iterable[_Event], path: Path) -> None:
    """Write a JSON Lines trace atomically, so a half-written file never replaces a good one."""
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as out:
        for event in events:
            out.write(to_json_line(event) + "\n")
    tmp.replace(path)


def read_trace(path: Path) -> tuple[list[Event], list[Diagnostic]]:
    """Read a saved trace; a bad line becomes a diagnostic with its line number, not an exception."""
    events: list[Event] = []
    problems: list[Diagnostic] = []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [], [Diagnostic(code=Code.FILE_UNREADABLE, message=str(exc), file=str(path))]
    # JSON Lines break at line feeds only: `str.splitlines` would also split at U+2028 or U+0085,
    # which JSON writers may leave raw inside a string.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            events.append(from_json_line(line))
        except (ValidationError, json.JSONDecodeError) as exc:
            first = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
            problems.append(
                Diagnostic(code=Code.MALFORMED_LINE, message=f"not a trace event: {first}", file=str(path), line=number)
            )
    return events, problems
