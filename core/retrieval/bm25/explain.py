"""What BM25's `explain` returns (`Bm25Index` and `Bm25Parts`): every term × field contribution
to one unit's score, the exhaustive path's own figures, which the pruned top-k matches exactly."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


class TermFieldContribution(NamedTuple):
    """One term's part in one field of a unit's score. A named tuple, not a frozen dataclass: a
    trace explains ~120 of them per plugin call, and a frozen dataclass's __init__ was ~4 µs each."""

    term: str
    field: str
    tf: int
    df: int
    idf: float
    field_weight: float
    dl: int
    avgdl: float
    query_count: int
    contribution: float


@dataclass(frozen=True)
class Bm25Explanation:
    """One unit's BM25 score taken apart: every term × field contribution, the role boost, the sum."""

    unit_id: str
    contributions: list[TermFieldContribution]
    role_boost: float
    raw: float
