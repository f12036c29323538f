"""Each lane's candidate pool for one query: what a kb plugin fuses and what `eval --beir` scores.

Both callers use these functions, so the figures `eval` reports are the lanes the engine runs.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from core.infra.config import HdcConfig
from core.retrieval.bm25.index import Bm25Index
from core.units import Act, Role

if TYPE_CHECKING:
    from core.retrieval.bm25.parts import Bm25Parts
    from core.retrieval.hdc.encoding import HdcQuery
    from core.retrieval.hdc.index import HdcIndex
    from core.retrieval.hdc.side import HdcWithSide


def bm25_pool(
    index: Bm25Index | Bm25Parts, terms: Sequence[str], preferred_roles: Collection[Role], pool: int
) -> dict[str, float]:
    """Raw BM25 scores of the lane's best `pool` units (score > 0)."""
    return dict(index.top_k(terms, preferred_roles, pool))


def hdc_question(
    index: HdcIndex | HdcWithSide,
    terms: Sequence[str],
    act: Act,
    config: HdcConfig,
    bm25_ranked: Sequence[str],
    feedback_units: int | None = None,
) -> HdcQuery:
    """The question's HDC vectors, with BM25's best `feedback_units` units bundled in (feedback;
    default `feedbackUnits`, a profile may set its own)."""
    depth = config.feedback_units if feedback_units is None else feedback_units
    query = index.query(terms, act)
    return index.with_feedback(query, bm25_ranked[:depth]) if depth else query


@runtime_checkable
class PooledHdc(Protocol):
    """An HDC index that ranks its own pool (one whose vectors are scanned elsewhere: shards)."""

    def pool(self, query: HdcQuery, floor: float, size: int) -> dict[str, float]: ...


def hdc_pool(index: HdcIndex | HdcWithSide | PooledHdc, query: HdcQuery, config: HdcConfig) -> dict[str, float]:
    """HDC scores of the lane's best `lanePool` units among those at or above `laneMinScore`."""
    if isinstance(index, PooledHdc):
        return index.pool(query, config.lane_min_score, config.lane_pool)
    return top_scores(index.unit_ids, index.scores(query), config.lane_min_score, config.lane_pool)


def top_scores(unit_ids: Sequence[str], scores: np.ndarray, floor: float, pool: int) -> dict[str, float]:
    """The best `pool` rows with score ≥ floor (and > 0), by score then row, as id → score."""
    eligible = np.flatnonzero((scores >= floor) & (scores > 0))
    if eligible.size > pool:
        eligible = eligible[np.argpartition(-scores[eligible], pool - 1)[:pool]]
    order = np.lexsort((eligible, -scores[eligible]))
    return {unit_ids[i]: float(scores[i]) for i in eligible[order]}
