"""BM25F over shards with the whole view's statistics, as Elasticsearch's dfs_query_then_fetch.

Phase one gathers, from every shard's part of the caller's view, N, each query term's document
frequency and per field how many units have it and their summed length; phase two scores each
shard's postings under the sums. `Bm25Parts` already scores parts under combined statistics;
`GlobalBm25` gives it the gathered ones instead of its own parts', so a shard's scores are the
floats one process computes over the whole view.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.infra.config import Bm25Config
from core.retrieval.bm25.fields import FIELDS
from core.retrieval.bm25.formula import idf
from core.retrieval.bm25.index import Bm25Index
from core.retrieval.bm25.parts import Bm25Parts


@dataclass(frozen=True)
class Bm25Stats:
    """What idf and avgdl need, summed over shards: units, df per query term, per field the
    units that have it and their total length."""

    units: int
    df: dict[str, int]
    have: tuple[int, ...]
    total: tuple[int, ...]

    @classmethod
    def empty(cls) -> Bm25Stats:
        return cls(0, {}, (0,) * len(FIELDS), (0,) * len(FIELDS))

    def plus(self, other: Bm25Stats) -> Bm25Stats:
        terms = dict.fromkeys([*self.df, *other.df])
        return Bm25Stats(
            self.units + other.units,
            {t: self.df.get(t, 0) + other.df.get(t, 0) for t in terms},
            tuple(a + b for a, b in zip(self.have, other.have, strict=True)),
            tuple(a + b for a, b in zip(self.total, other.total, strict=True)),
        )


def parts_of(index: Bm25Index | Bm25Parts) -> list:
    """The parts a view's BM25 is made of (a whole index is one)."""
    return list(index.parts) if isinstance(index, Bm25Parts) else [index]


def local_stats(index: Bm25Index | Bm25Parts, terms: Sequence[str]) -> Bm25Stats:
    """Phase one on one shard: its statistics for the distinct query terms."""
    parts = parts_of(index)
    have = np.zeros(len(FIELDS), np.int64)
    total = np.zeros(len(FIELDS), np.int64)
    for part in parts:
        part_have, part_total = part.field_totals()
        have += part_have
        total += part_total
    df = {term: sum(part.doc_freq(term) for part in parts) for term in dict.fromkeys(terms)}
    return Bm25Stats(sum(len(p) for p in parts), df, tuple(have.tolist()), tuple(total.tolist()))


class GlobalBm25(Bm25Parts):
    """A shard's parts scored with statistics gathered from every shard (phase two)."""

    def __init__(self, parts: Sequence, config: Bm25Config, stats: Bm25Stats):
        super().__init__(parts, config)
        have, total = np.array(stats.have, np.int64), np.array(stats.total, np.int64)
        # As `Bm25Parts` and `Bm25Index` average them: over the units that have the field.
        self._avgdl = np.where(have > 0, total / np.maximum(have, 1), 1.0)
        self._stats = stats

    def _df(self, term: str) -> int:
        return self._stats.df.get(term, 0)

    def _idf(self, df: int) -> float:
        return idf(self._stats.units, df)
