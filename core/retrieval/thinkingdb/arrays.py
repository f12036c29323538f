"""Vectorised helpers over fact-id arrays: CSR groups, concatenated slices, sorted-set membership."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

EMPTY = np.zeros(0, dtype=np.int64)


def csr(
    size: int, keys: np.ndarray, subset: np.ndarray | None = None, rank: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Fact ids grouped by `keys`, ordered inside a group by `rank` then KB order, and the offset
    of each group."""
    ids = np.arange(len(keys), dtype=np.int64) if subset is None else subset
    order = ids[np.lexsort((ids, keys[ids]) if rank is None else (ids, rank[ids], keys[ids]))]
    return order, np.searchsorted(keys[order], np.arange(size + 1)).astype(np.int64)


def gather(groups: tuple[np.ndarray, np.ndarray], nodes: np.ndarray, at_most: int | None = None) -> np.ndarray:
    """Concatenated CSR groups of `nodes` (each cut to `at_most`), in node order."""
    order, starts = groups
    lo, hi = starts[nodes], starts[nodes + 1]
    return slices(order, lo, hi if at_most is None else np.minimum(hi, lo + at_most))


def slices(order: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Concatenation of order[lo[k]:hi[k]] for every k, without a Python loop."""
    lengths = hi - lo
    total = int(lengths.sum())
    if not total:
        return EMPTY
    shift = (lo - (lengths.cumsum() - lengths)).repeat(lengths)
    return order[shift + np.arange(total)]


def member(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """`np.isin` for a sorted set: a binary search, much cheaper than isin's sort or hash."""
    if not len(sorted_set):
        return np.zeros(len(values), dtype=bool)
    at = np.minimum(sorted_set.searchsorted(values), len(sorted_set) - 1)
    return sorted_set[at] == values


def distinct(values: np.ndarray) -> np.ndarray:
    """`np.unique(values)` for a plain array: sorted, each value once. Not np.unique itself: without
    an optional output it first asks `np.ma.is_masked`, whose first use imports numpy.ma (~10-20 ms
    of every `mrptui ask`, issue 41), and its checks cost more than the sort on a query's arrays."""
    ordered = np.sort(values)
    return ordered[_starts(ordered)]


def unique_in_order(values: np.ndarray) -> np.ndarray:
    """Each value once, at its first occurrence (np.unique's return_index, without its overhead)."""
    order = values.argsort(kind="stable")
    return values[np.sort(order[_starts(values[order])])]


def counted(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(values, return_counts=True)` for a plain array, without its overhead."""
    ordered = np.sort(values)
    starts = np.flatnonzero(_starts(ordered))
    return ordered[starts], np.diff(starts, append=len(ordered))


def _starts(ordered: np.ndarray) -> np.ndarray:
    """Where each run of equal values of a sorted array starts, as a mask."""
    mask = np.ones(len(ordered), dtype=bool)
    mask[1:] = ordered[1:] != ordered[:-1]
    return mask


def chunks(start: int, end: int, first: int = 512) -> Iterable[slice]:
    """[start, end) in slices of doubling size."""
    size = first
    while start < end:
        yield slice(start, min(start + size, end))
        start, size = start + size, size * 2
