"""The per-field postings of a BM25 index: every (term, unit, field) with its tf.

Scoring never reads them (field weights and length norms are folded into the index's term rows at
build time); they are what `explain` shows, each term × field contribution, and what a subset of
the index is cut from.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from core.infra.config import Bm25Config
from core.retrieval.bm25.explain import TermFieldContribution
from core.retrieval.bm25.fields import FIELDS
from core.retrieval.bm25.formula import term_weight

# `TermFieldContribution._make` without its Python-level call: a row of fields in order.
_contribution_of_row = partial(tuple.__new__, TermFieldContribution)


@dataclass(frozen=True)
class FieldPostings:
    """Every (term, unit, field) with its tf, sorted by the packed key for binary search."""

    keys: np.ndarray  # int64: (term * N + unit) * F + field
    tf: np.ndarray  # int32
    lengths: np.ndarray  # int32 [F, N] field length in tokens
    avgdl: np.ndarray  # float64 [F]
    norms: np.ndarray  # float64 [F, N] length_norm of each field of each unit

    ARRAYS = ("keys", "tf", "lengths", "avgdl", "norms")

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], units: int) -> FieldPostings:
        """The postings saved by `as_arrays`, of `units` units; raises ValueError on a shape mismatch."""
        keys, tf, lengths, avgdl, norms = (arrays[name] for name in cls.ARRAYS)
        fields, shapes = len(FIELDS), (lengths.shape, avgdl.shape, norms.shape)
        if shapes != ((fields, units), (fields,), (fields, units)) or len(keys) != len(tf):
            raise ValueError("BM25 arrays do not fit together")
        return cls(keys, tf, lengths, avgdl, norms)

    def as_arrays(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in self.ARRAYS}

    @property
    def units(self) -> int:
        return self.lengths.shape[1]

    def of_term(self, tid: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Rows, fields and tf of every (unit, field) holding term `tid`, by row then field."""
        stride, width = max(self.units, 1), len(FIELDS)
        start, end = np.searchsorted(self.keys, [tid * stride * width, (tid + 1) * stride * width])
        local = self.keys[start:end] - tid * stride * width
        return local // width, local % width, self.tf[start:end]

    def of_rows(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Term, new row (position in `rows`), field and tf of every posting of those rows, in
        key order."""
        width, stride = len(FIELDS), max(self.units, 1)
        position = np.full(self.units, -1, dtype=np.int64)
        position[rows] = np.arange(len(rows))
        pair, field = np.divmod(self.keys, width)
        term, unit = np.divmod(pair, stride)
        unit = position[unit]
        kept = unit >= 0
        return term[kept], unit[kept], field[kept], self.tf[kept]

    def contributions(
        self,
        terms: list[tuple[str, int]],
        tids: np.ndarray,
        rows: list[int],
        df: np.ndarray,
        idf: np.ndarray,
        config: Bm25Config,
    ) -> list[list[TermFieldContribution]]:
        """Each row's term × field contributions, in query-term then field order, for `terms`
        (with how often the query says each) whose ids are `tids`. All the terms' postings of all
        the rows are gathered and weighed in array steps, and the named tuples made column by
        column: a Python loop over them (~120 per call) was most of a trace's explanations.
        `term_weight` over arrays does its operations in its order: the same floats."""
        stride, width = max(self.units, 1), len(FIELDS)
        at_rows = np.array(rows, dtype=np.int64)
        # Every (term, row) pair in term-major order; a pair's fields are the adjacent keys [pair, pair + width).
        pairs = (tids[:, None] * stride + at_rows[None, :]) * width
        # Each term's keys are one short run of the sorted keys, found first: the pairs are then
        # searched in it (in cache), not each over every key (memory-bound at 100k units).
        span = stride * width
        lows, highs = np.split(np.searchsorted(self.keys, np.concatenate([tids * span, (tids + 1) * span])), 2)
        found = np.stack(
            [
                low + np.searchsorted(self.keys[low:high], np.concatenate([term_pairs, term_pairs + width]))
                for low, high, term_pairs in zip(lows.tolist(), highs.tolist(), pairs, strict=True)
            ]
        )
        starts, ends = found[:, : len(rows)].ravel(), found[:, len(rows) :].ravel()
        pairs = pairs.ravel()
        counts = ends - starts
        owner = np.repeat(np.arange(len(pairs)), counts)
        at = starts[owner] + np.arange(len(owner)) - (np.cumsum(counts) - counts)[owner]
        fields = self.keys[at] - pairs[owner]
        term_of, row_of = np.divmod(owner, len(rows))
        # Row by row, keeping query-term then field order within a row.
        order = np.argsort(row_of, kind="stable")
        term_of, fields, at = term_of[order], fields[order], at[order]
        unit_rows = at_rows[row_of[order]]
        tf = self.tf[at].astype(np.int64)
        field_weights = config.field_weights
        weight = np.array([field_weights.get(field, 0.0) for field in FIELDS])[fields]
        term_idf, times = idf[tids][term_of], np.array([t for _, t in terms], dtype=np.int64)[term_of]
        contribution = term_weight(weight, term_idf, tf, self.norms[fields, unit_rows], config.k1) * times
        names = [term for term, _ in terms]
        columns = zip(
            map(names.__getitem__, term_of.tolist()),
            map(FIELDS.__getitem__, fields.tolist()),
            tf.tolist(),
            df[tids][term_of].tolist(),
            term_idf.tolist(),
            weight.tolist(),
            self.lengths[fields, unit_rows].tolist(),
            self.avgdl[fields].tolist(),
            times.tolist(),
            contribution.tolist(),
            strict=True,
        )
        made = list(map(_contribution_of_row, columns))
        bounds = np.cumsum(np.bincount(row_of, minlength=len(rows))).tolist()
        return [made[a:b] for a, b in zip([0, *bounds[:-1]], bounds, strict=True)]
