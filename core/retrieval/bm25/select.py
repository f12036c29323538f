"""Exhaustive BM25 top-k over the term × unit rows of `Bm25Index`: the definition the pruned path
(`bm25_prune.py`) must match, and the path taken without numba or before it loads.

A query over few postings is scored sparsely (only the units its terms hold, no array of N
scores to fill, clear and scan); one over many postings densely (`np.bincount` over every unit).
Both add each unit's contributions in query-term order, so a unit's score is the same float
either way, and the same as the pruned path's.
"""

from __future__ import annotations

import numpy as np

# Sparse while postings ≤ N / SPARSE_SHARE: it sorts its postings, a few times a dense pass's
# cost per element, against the dense pass's fixed cost of N.
SPARSE_SHARE = 8
_SAMPLE_STRIDE = 64


def postings_of(
    indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, tids: np.ndarray, counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Every posting of the query's terms, in query-term order: unit rows and count × value."""
    spans = [(int(indptr[t]), int(indptr[t + 1])) for t in tids.tolist()]
    units = np.concatenate([np.zeros(0, np.int64), *(indices[a:b] for a, b in spans)])
    weights = np.concatenate(
        [
            np.zeros(0),
            *(data[a:b] * c if c > 1 else data[a:b] for (a, b), c in zip(spans, counts.tolist(), strict=True)),
        ]
    )
    return units, weights


def sparse_scores(units: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct units of the postings, ascending, and each one's summed weight. bincount
    adds in input order, i.e. query-term order, as the dense path does."""
    distinct, group = np.unique(units, return_inverse=True)
    return distinct, np.bincount(group.ravel(), weights=weights, minlength=len(distinct))


def ranked(rows: np.ndarray, values: np.ndarray, k: int, id_rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The k best of the rows with score > 0, best first: score descending, then id rank."""
    positive = values > 0
    rows, values = best(rows[positive], values[positive], k, id_rank)
    order = np.lexsort((id_rank[rows], -values))
    return rows[order], values[order]


def best(rows: np.ndarray, values: np.ndarray, k: int, id_rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The k best (score desc, id asc) among candidate rows, in no particular order.

    Ties at the k-th score are settled by id rank, which is distinct per unit, so no partition
    here runs over a block of equal keys.
    """
    if len(rows) <= k:
        return rows, values
    kth = np.partition(values, len(values) - k)[len(values) - k]
    above = np.flatnonzero(values > kth)
    tied = np.flatnonzero(values == kth)
    need = k - len(above)
    if len(tied) > need:
        tied = tied[np.argpartition(id_rank[rows[tied]], need - 1)[:need]]
    keep = np.concatenate([above, tied])
    return rows[keep], values[keep]


def candidates(scores: np.ndarray, k: int) -> np.ndarray:
    """Rows that may be in the top k: a superset, found without partitioning all N scores.

    The k-th best of every 64th score cannot beat the k-th best overall, so every top-k unit scores
    at least that much; the filter keeps the sea of low (often tied) scores out of the selection,
    where np.argpartition degrades (DESIGN §14).
    """
    sample = scores[::_SAMPLE_STRIDE]
    if len(sample) > k:
        floor = np.partition(sample, len(sample) - k)[len(sample) - k]
        if floor > 0:
            return np.flatnonzero(scores >= floor)
    return np.flatnonzero(scores > 0)
