"""Summarise a run's events into the `mrptui ask --json` object (DESIGN §12).

A pure function of the events, so a saved trace summarises exactly as the live run did.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from core.kernel.events import (
    AnswerReady,
    AttemptFinished,
    Backtracked,
    IntentDetected,
    PlanBuilt,
    ProofNode,
    ProofsFound,
    RetrievalScored,
    RunFinished,
    RunStarted,
    ShardTiming,
)


def _plan(event: PlanBuilt) -> dict[str, Any]:
    return {
        "planner": event.planner,
        "revision": event.revision,
        "stages": {s.stage: list(s.candidates) for s in event.stages},
        "reasons": {s.stage: list(s.reasons) for s in event.stages},
    }


def _proof_dict(node: ProofNode) -> dict[str, Any]:
    return node.model_dump(exclude_none=True)


def _best_proofs(proofs: Sequence[ProofNode]) -> dict[str, ProofNode]:
    """Each unit's best proof: proofs arrive best first, so the first one naming a unit wins."""
    best: dict[str, ProofNode] = {}
    for proof in proofs:
        for unit_id in _units_of(proof):
            best.setdefault(unit_id, proof)
    return best


def _units_of(node: ProofNode) -> list[str]:
    return list(dict.fromkeys([*node.units, *(u for p in node.premises for u in _units_of(p))]))


def evidence_rows(events: Sequence[object], answer: AnswerReady) -> list[dict[str, Any]]:
    """Kept candidates of the retrieval each answer part was built from, with their best proof."""
    rows: list[dict[str, Any]] = []
    for part in answer.parts:
        scored = [
            e
            for e in events
            if isinstance(e, RetrievalScored)
            and e.plugin == part.evidence_plugin
            and e.intent_index == part.intent_index
        ]
        proofs = [
            e
            for e in events
            if isinstance(e, ProofsFound) and e.plugin == part.evidence_plugin and e.intent_index == part.intent_index
        ]
        if not scored:
            continue
        best = _best_proofs(proofs[-1].proofs) if proofs else {}
        for c in scored[-1].candidates:
            if not c.kept:
                continue
            row = {
                "id": c.id,
                "intent": part.intent_index,
                "score": c.score,
                "bm25": c.bm25,
                "hdc": c.hdc,
                "tdb": c.tdb,
                "fused": c.fused,
            }
            if c.current_turn:
                row["current_turn"] = True
            if c.shard is not None:  # searched on a cluster: the shard that holds it
                row["shard"] = c.shard
            if c.position:  # the conversation-position prior in `score` (core/memory/position.py)
                row["position"] = c.position
            if c.fusion is not None:  # how `fused` was summed, lane by lane (docs/scoring.md, Fusion)
                row["fusion"] = c.fusion.model_dump()
            if c.id in best:
                row["proof"] = _proof_dict(best[c.id])
            rows.append(row)
    return rows


def summarise(events: Sequence[object]) -> dict[str, Any]:
    answer = next((e for e in reversed(events) if isinstance(e, AnswerReady)), None)
    finished = next((e for e in reversed(events) if isinstance(e, RunFinished)), None)
    plans = [_plan(e) for e in events if isinstance(e, PlanBuilt)]
    return {
        "answer": answer.answer if answer else "",
        "status": answer.status if answer else (finished.status if finished else "failed"),
        "plan": plans[-1] if plans else None,
        "plans": plans,
        "attempts": [attempt_row(e) for e in events if isinstance(e, AttemptFinished)],
        # Shards that did not answer an attempt: the answer stands without their units.
        "incomplete": unanswered_shards((e.plugin, e.shards) for e in events if isinstance(e, AttemptFinished)),
        # Closures a budget cut short: the answer stands on what was derived before the stop.
        "budget_stops": budget_stops(e for e in events if isinstance(e, ProofsFound)),
        "evidence": evidence_rows(events, answer) if answer else [],
        "citations": list(answer.evidence_ids) if answer else [],
        "parts": [p.model_dump() for p in answer.parts] if answer else [],
        "backtracks": [
            {"level": e.level, "stage": e.stage, "plugin": e.plugin, "reason": e.reason}
            for e in events
            if isinstance(e, Backtracked)
        ],
        "timings_ms": {k: round(v, 3) for k, v in (finished.timings_ms if finished else {}).items()},
        "memory": memory_rows(events),
        # Records not offered because a unit they cite changed or left the caller's view.
        "memory_withheld": [note for e in events if isinstance(e, RunStarted) for note in e.memory_withheld],
        # A replan detects the intent again: each completion is listed once.
        "resolved": list(dict.fromkeys(note for e in events if isinstance(e, IntentDetected) for note in e.resolved)),
        "unresolved": list(
            dict.fromkeys(note for e in events if isinstance(e, IntentDetected) for note in e.unresolved)
        ),
    }


def attempt_row(event: AttemptFinished) -> dict[str, Any]:
    row = {
        "stage": event.stage,
        "plugin": event.plugin,
        "status": event.status,
        "reason": event.reason,
        "ms": round(event.ms, 3),
    }
    if event.shards:  # searched on a cluster: per shard its ms on a worker, or that it did not answer
        row["shards"] = [s.model_dump() for s in event.shards]
    return row


def unanswered_shards(attempts: Iterable[tuple[str, Sequence[ShardTiming]]]) -> list[str]:
    """ "shard 3 of 4 did not answer (kb-balanced, kb-fast)": each shard that failed one of the
    attempts (plugin, its shards), with the plugins it failed."""
    failed: dict[tuple[int, int], list[str]] = {}
    for plugin, shards in attempts:
        for shard in shards:
            if not shard.answered:
                plugins = failed.setdefault((shard.shard, shard.of), [])
                if plugin not in plugins:
                    plugins.append(plugin)
    return [f"shard {n} of {of} did not answer ({', '.join(plugins)})" for (n, of), plugins in failed.items()]


def budget_stops(proofs: Iterable[ProofsFound]) -> list[str]:
    """ "kb-thinkingdb stopped deriving at maxClosureMb=1024": each plugin whose closure a budget
    stopped, once per budget (a replan runs the plugin again)."""
    said = (f"{p.plugin} stopped deriving at {p.budget_stop}" for p in proofs if p.budget_stop)
    return list(dict.fromkeys(said))


def memory_rows(events: Sequence[object]) -> list[dict[str, Any]]:
    """The memory records the run used, with seed 001's score parts: those its follow-up resolution
    used, and the one whose cited units placed the candidates (`position`: core/memory/position.py)."""
    started = next((e for e in events if isinstance(e, RunStarted)), None)
    used = {i for e in events if isinstance(e, IntentDetected) for i in e.memory_used}
    placed = position_notes(events)
    return [
        {
            "id": m.id,
            "turn": m.turn,
            "scope": m.scope,
            "kind": m.kind,
            "question": m.question,
            "sim": round(m.sim, 4),
            "recency": round(m.recency, 4),
            "quality": round(m.quality, 4),
            "score": round(m.score, 4),
            **({"position": placed[m.id]} if m.id in placed else {}),
        }
        for m in (started.memory if started else ())
        if m.id in used or m.id in placed
    ]


def position_notes(events: Sequence[object]) -> dict[str, str]:
    """Memory record id → the position priors its cited units gave the run's candidates."""
    notes: dict[str, list[str]] = {}
    for e in events:
        if isinstance(e, RetrievalScored) and e.position_anchor:
            said = notes.setdefault(e.position_anchor, [])
            if f"{e.plugin}: {e.position}" not in said:
                said.append(f"{e.plugin}: {e.position}")
    return {record: "\n".join(said) for record, said in notes.items()}
