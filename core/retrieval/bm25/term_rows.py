"""The folded term × unit matrix of a BM25 index, CSR rows by term (DESIGN §14).

Field weights, idf and length normalisation do not depend on the query, so every field's
contribution is folded into one weight per (term, unit) at build time: a query's raw score is the
sum of its terms' rows, each repeated term counted once more.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TermRows:
    """The index's postings as compressed sparse rows: one row of units and weights per term."""

    indptr: np.ndarray  # int64 [V + 1]: term t's units are indices[indptr[t]:indptr[t + 1]]
    indices: np.ndarray  # the units of each row, ascending
    data: np.ndarray  # float64: each (term, unit)'s folded weight

    ARRAYS = ("indptr", "indices", "data")

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], terms: int) -> TermRows:
        """The rows saved by `as_arrays`, for `terms` terms; raises ValueError on a shape mismatch."""
        indptr, indices, data = (arrays[name] for name in cls.ARRAYS)
        if indptr.shape != (terms + 1,) or not len(indices) == len(data) == int(indptr[-1]):
            raise ValueError("BM25 arrays do not fit together")
        return cls(indptr, indices, data)

    def as_arrays(self) -> dict[str, np.ndarray]:
        return dict(zip(self.ARRAYS, self.arrays(), strict=True))

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.indptr, self.indices, self.data

    def span(self, tid: int) -> slice:
        return slice(int(self.indptr[tid]), int(self.indptr[tid + 1]))

    def raw(self, terms: list[tuple[int, int]], units: int) -> np.ndarray:
        """Raw score of every unit for the term ids with how often the query says each."""
        if not terms:
            return np.zeros(units)
        spans = [self.span(tid) for tid, _ in terms]
        rows = np.concatenate([self.indices[s] for s in spans])
        weights = np.concatenate([self.data[s] * c if c > 1 else self.data[s] for s, (_, c) in zip(spans, terms)])
        # bincount adds in input order, i.e. query-term order, like explain.
        return np.bincount(rows, weights=weights, minlength=units)

    def raw_row(self, terms: list[tuple[int, int]], row: int) -> float:
        """`raw(terms)[row]` without scoring every unit (explain runs once per candidate): each
        term's posting of the row is found by binary search, and added in query-term order as
        bincount adds them, so the sum is the same float."""
        total = 0.0
        for tid, times in terms:
            start, end = int(self.indptr[tid]), int(self.indptr[tid + 1])
            at = start + int(np.searchsorted(self.indices[start:end], row))
            if at < end and int(self.indices[at]) == row:
                total += float(self.data[at] * times if times > 1 else self.data[at])
        return total

    def holds(self, tid: int, row: int) -> bool:
        """Whether unit `row` holds term `tid` in any field."""
        return row in self.indices[self.span(tid)]
