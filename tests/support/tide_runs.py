"""Whole runs about a tide-gauge network, built from events, for the run diff's tests (core and TUI).

Nothing like sample_kb, so the pairing is tested on material the engine never saw.
"""

from __future__ import annotations

from core.kernel.candidates import CandidateScore
from core.kernel.events import (
    AnswerReady,
    AttemptFinished,
    AttemptStarted,
    Backtracked,
    Intervened,
    PlanBuilt,
    PlanStage,
    RetrievalScored,
    RunFinished,
    RunStarted,
)

GAUGE = "gauges::chunk-001::unit-{:03d}"


def candidates(*scored: tuple[int, float, bool], cut: str = "gap") -> tuple[CandidateScore, ...]:
    """(unit number, score, kept) in rank order."""
    return tuple(
        CandidateScore(
            id=GAUGE.format(n),
            role="Fact",
            rank=rank,
            fused=score,
            score=score,
            kept=kept,
            cut_reason=None if kept else cut,
        )
        for rank, (n, score, kept) in enumerate(scored, start=1)
    )


def run(
    *,
    pins: dict[str, str] | None = None,
    kb_order: tuple[str, ...] = ("kb-fast", "kb-balanced"),
    kb_reason: str = "cheap first",
    first_kb: str = "success",
    scored: tuple[CandidateScore, ...] = candidates((1, 0.9, True), (2, 0.7, True), (3, 0.2, False)),
    answer: str = "Gauge 1 reads the spring tide at the harbour mouth.",
    status: str = "grounded",
    intervene: bool = False,
    finish_val: bool = True,
) -> list:
    """A whole run: plan, sd, kb (first candidate called, the second not reached), gs, val, answer."""
    events: list = [
        RunStarted(question="Which gauge reads the spring tide?", as_of="2031-03-04", kb_version="v7", pins=pins or {})
    ]
    if intervene:
        events.append(
            Intervened(
                change="pin_plugin",
                target=kb_order[0],
                stage="kb",
                live=False,
                note=f"{kb_order[0]} pinned first for kb by the user",
            )
        )
    events.append(
        PlanBuilt(
            revision=0,
            planner="planner-default",
            stages=(
                PlanStage(stage="sd", candidates=("sd-symbolic",)),
                PlanStage(stage="kb", candidates=kb_order, reasons=(kb_reason,)),
                PlanStage(stage="gs", candidates=("gs-symbolic",)),
            ),
        )
    )
    events += [
        AttemptStarted(stage="sd", plugin="sd-symbolic", revision=0),
        AttemptFinished(stage="sd", plugin="sd-symbolic", status="success", reason="1 intent", ms=1.0),
        AttemptStarted(stage="kb", plugin=kb_order[0], revision=0),
        AttemptFinished(stage="kb", plugin=kb_order[0], status=first_kb, reason="2 kept", ms=4.0),
    ]
    if first_kb != "success":
        events.append(
            Backtracked(level=1, stage="kb", plugin=kb_order[0], reason="next candidate: too few", revision=0)
        )
    else:
        events.append(
            AttemptFinished(
                stage="kb", plugin=kb_order[1], status="skipped", reason=f"not reached: {kb_order[0]} was sufficient"
            )
        )
    events.append(
        RetrievalScored(
            plugin=kb_order[0],
            act="explain",
            query_terms=("tide",),
            lanes=("bm25",),
            sufficient=True,
            total_candidates=len(scored),
            candidates=scored,
            evidence_ids=tuple(c.id for c in scored if c.kept),
        )
    )
    events.append(AttemptStarted(stage="gs", plugin="gs-symbolic", revision=0))
    if finish_val:
        events += [
            AttemptFinished(stage="gs", plugin="gs-symbolic", status="success", reason="answered", ms=2.0),
            AnswerReady(answer=answer, status=status, evidence_ids=(GAUGE.format(1),)),
            RunFinished(status=status),
        ]
    return events
