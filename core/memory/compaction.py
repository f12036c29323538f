"""Compaction (seed 001 §5): old raw turns become extractive summaries whose confidence weighs their score.

Eligible turns sorted by (ts, id) are cut into c = ⌈n/k⌉ contiguous buckets, turn i going to bucket
⌊i·c/n⌋. A bucket's centroid is the bitwise majority of its turns' HDC vectors; the summary keeps
the turns at least as close to the centroid as the bucket's mean (at least one), and its confidence
is the mean cosine of those turns to the centroid (for ±1 vectors cos = 1 − 2·hamming/D, floored
at 0), so decay_rate = 1 − confidence.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from core.memory.cited import UNPINNED, merged
from core.memory.records import MAX_TEXT_CHARS, MemoryRecord, record_id
from core.retrieval.hdc.vectors import DIMENSIONS, bundle


def bucket_of(i: int, n: int, k: int) -> int:
    """clusterIndex(i) = ⌊i·c/n⌋ with c = ⌈n/k⌉."""
    return i * math.ceil(n / k) // n


def buckets(n: int, k: int) -> list[range]:
    """The contiguous index ranges of n turns in buckets of about k (sizes differ by at most 1)."""
    if n == 0:
        return []
    c = math.ceil(n / k)
    # ⌊i·c/n⌋ ≥ j exactly when i ≥ j·n/c, so bucket j starts at ⌈j·n/c⌉.
    starts = [-(-j * n // c) for j in range(c)]
    return [range(start, end) for start, end in zip(starts, [*starts[1:], n])]


def cosines(vectors: np.ndarray, centroid: np.ndarray) -> np.ndarray:
    """cos between ±1 vectors stored as bits: 1 − 2·hamming/D."""
    distances = np.bitwise_count(vectors ^ centroid).sum(axis=1, dtype=np.int64)
    return 1.0 - 2.0 * distances / DIMENSIONS


def compact(turns: Sequence[MemoryRecord], k: int, vector: Callable[[MemoryRecord], np.ndarray]) -> list[MemoryRecord]:
    """One summary record per bucket of `turns` (raw turns only; summaries are never re-compacted)."""
    ordered = sorted((t for t in turns if t.kind == "turn"), key=lambda t: (t.ts, t.id))
    summaries = []
    for span in buckets(len(ordered), k):
        group = [ordered[i] for i in span]
        vectors = np.vstack([vector(t) for t in group])
        cos = np.maximum(cosines(vectors, bundle(vectors)), 0.0)
        chosen = [t for t, c in zip(group, cos.tolist()) if c >= cos.mean()] or group[:1]
        confidence = float(np.mean([c for t, c in zip(group, cos.tolist()) if t in chosen]))
        summaries.append(_summary(group, chosen, min(1.0, confidence)))
    return summaries


def _summary(group: list[MemoryRecord], chosen: list[MemoryRecord], confidence: float) -> MemoryRecord:
    last = group[-1]
    text = " | ".join(f"{t.question} → {t.lead}" if t.lead else t.question for t in chosen)
    cited = merged(pair for t in chosen for pair in zip(t.unit_ids, t.unit_digests + (UNPINNED,) * len(t.unit_ids)))
    return MemoryRecord(
        id=record_id("summary", *(t.id for t in group)),
        scope=last.scope,
        kind="summary",
        caller=last.caller,
        conversation=last.conversation,
        ts=last.ts,
        turn=last.turn,
        question=text[:MAX_TEXT_CHARS],
        entity=chosen[-1].entity,
        unit_ids=tuple(cited),
        unit_digests=tuple(cited.values()),
        source_ids=tuple(t.id for t in group),
        confidence=confidence,
    )
