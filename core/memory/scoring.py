"""Seed 001's hybrid memory score (docs/scoring.md, "Memory").

    base  = α·sim + β·R + γ·S          R = exp(−λ_scope · Δt),  Δt in seconds
    score = base · Q                   Q = 1 − δ·decay_rate for summaries, 1 otherwise

`sim` is the question's HDC similarity to the record's text mapped to [0, 1] the way the HDC lane
maps a field's similarity (`core.retrieval.hdc.encoding.calibrate`), so it means the same thing in both places.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.infra.config import MemoryConfig
from core.memory.records import MemoryRecord


@dataclass(frozen=True)
class ScoredRecord:
    """A memory record and the parts of its score: similarity, recency, scope and quality."""

    record: MemoryRecord
    sim: float
    recency: float
    scope_weight: float
    quality: float
    score: float


def recency(age_seconds: float, decay: float) -> float:
    """R = exp(−λ·Δt); a record from the future (a clock that moved back) counts as new."""
    return math.exp(-decay * max(0.0, age_seconds))


def half_life(decay: float) -> float:
    """t½ = ln 2 / λ, in seconds."""
    return math.log(2) / decay


def quality(record: MemoryRecord, config: MemoryConfig) -> float:
    return 1.0 - config.delta * record.decay_rate if record.kind == "summary" else 1.0


@dataclass(frozen=True)
class RecordArrays:
    """The per-record numbers that do not depend on the question, as arrays (built once per record set)."""

    records: tuple[MemoryRecord, ...]
    ts: np.ndarray
    decay: np.ndarray
    scope_weight: np.ndarray
    quality: np.ndarray
    ids: np.ndarray

    @classmethod
    def of(cls, records: Sequence[MemoryRecord], config: MemoryConfig) -> RecordArrays:
        def column(values):
            return np.fromiter(values, dtype=np.float64, count=len(records))

        return cls(
            tuple(records),
            column(r.ts for r in records),
            column(config.decay.of(r.scope) for r in records),
            column(config.scope_weight.of(r.scope) for r in records),
            column(quality(r, config) for r in records),
            np.array([r.id for r in records], dtype=str),
        )


def score_records(
    records: Sequence[MemoryRecord] | RecordArrays,
    sims: np.ndarray,
    now: float,
    config: MemoryConfig,
    limit: int | None = None,
) -> list[ScoredRecord]:
    """The records with their score parts, best first (ties: newer first, then id); `limit` keeps the best few."""
    arrays = records if isinstance(records, RecordArrays) else RecordArrays.of(records, config)
    sims = np.asarray(sims, dtype=np.float64)
    r = np.exp(-arrays.decay * np.maximum(0.0, now - arrays.ts))
    scores = (config.alpha * sims + config.beta * r + config.gamma * arrays.scope_weight) * arrays.quality
    order = np.lexsort((arrays.ids, -arrays.ts, -scores))[:limit]
    return [
        ScoredRecord(
            arrays.records[i],
            float(sims[i]),
            float(r[i]),
            float(arrays.scope_weight[i]),
            float(arrays.quality[i]),
            float(scores[i]),
        )
        for i in order.tolist()
    ]
