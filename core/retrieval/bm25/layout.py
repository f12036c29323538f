"""Laying out a BM25 index's arrays (core/retrieval/bm25/index.py): sorted (term, unit, field) keys
with their tf, counted from tokens or placed from per-file parts, and the term × unit CSR rows
whose data are each pair's summed field contributions.

Keys pack (term × N + unit) × F + field, so a (term, unit) pair's fields are adjacent keys. At a
million units the key arrays hold tens of millions of entries; every pass below works a
cache-sized block at a time and writes straight into the result, because whole-array
temporaries (~300 MB each) ran several times slower through memory, and each fresh one paid its
page faults again (half the merge's time at 1M was the kernel's).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np

# Keys per block: the block's temporaries (a few arrays of this many 8-byte values) stay in cache.
BLOCK = 1 << 16


def count_keys(term_of: np.ndarray, lengths: np.ndarray, stride: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct keys and their tf from every token's term id (units, then fields, in
    order) and the field lengths [F, N]; built in place to keep the peak low."""
    per_slot = lengths.T.ravel()
    slot = np.repeat(np.arange(len(per_slot), dtype=np.int32), per_slot)
    keys = term_of.astype(np.int64)
    keys *= stride
    keys += slot // width
    keys *= width
    keys += slot % width
    del slot
    keys.sort()
    new = np.ones(len(keys), dtype=bool)
    new[1:] = keys[1:] != keys[:-1]
    starts = np.flatnonzero(new)
    tf = np.diff(np.append(starts, len(keys))).astype(np.int32)
    return keys[starts], tf


# A part to place: its terms' ids in the result, how many keys each of its terms has, and a
# function giving its keys renumbered for the result (with their tf), called once when placed.
PartRun = tuple[np.ndarray, np.ndarray, Callable[[], tuple[np.ndarray, np.ndarray]]]


def place_parts(runs: Sequence[PartRun], terms: int) -> tuple[np.ndarray, np.ndarray]:
    """Keys (and their tf) of several parts in sorted order. Each part's keys are sorted by term,
    so each of its terms is one run; a counting sort lays every term's runs out part after part.
    With the parts in order of their first row and no two parts' rows interleaving (a merged view
    index lays its files out one after another) that is the sorted order; else a sort settles it.
    A part's renumbered keys exist only while it is placed."""
    total = np.zeros(terms, dtype=np.int64)
    for term_of, per_term, _ in runs:
        total[term_of] += per_term
    filled = np.cumsum(total) - total
    size = int(total.sum())
    keys, tf = np.empty(size, dtype=np.int64), np.empty(size, dtype=np.int32)
    for term_of, per_term, renumbered in runs:
        part_keys, part_tf = renumbered()
        # A part's terms are distinct words, so each global term appears once in `term_of`.
        shift = filled[term_of] - (np.cumsum(per_term) - per_term)
        filled[term_of] += per_term
        at = np.repeat(shift, per_term) + np.arange(len(part_keys))
        keys[at], tf[at] = part_keys, part_tf
    if size > 1 and not bool(np.all(keys[1:] > keys[:-1])):
        order = np.argsort(keys)
        keys, tf = keys[order], tf[order]
    return keys, tf


def keys_per_term(keys: np.ndarray, span: int, terms: int) -> np.ndarray:
    """How many of the sorted `keys` each term has (a term's keys lie in [t·span, (t+1)·span))."""
    return np.diff(np.searchsorted(keys, np.arange(terms + 1, dtype=np.int64) * span))


def blocks(keys: np.ndarray, width: int) -> Iterator[tuple[int, int]]:
    """(start, end) of cache-sized runs of the sorted `keys`, never splitting a pair's fields."""
    start, size = 0, len(keys)
    while start < size:
        end = min(start + BLOCK, size)
        while end < size and keys[end] // width == keys[end - 1] // width:
            end += 1
        yield start, end
        start = end


def _firsts(pairs: np.ndarray) -> np.ndarray:
    """Where each pair starts among a block's keys (a block starts at a pair)."""
    first = np.ones(len(pairs), dtype=bool)
    first[1:] = pairs[1:] != pairs[:-1]
    return first


def document_frequencies(keys: np.ndarray, stride: int, width: int, terms: int) -> np.ndarray:
    """df of every term: how many units hold it in any field (one pair per such unit)."""
    df = np.zeros(terms, dtype=np.int64)
    for start, end in blocks(keys, width):
        pairs = keys[start:end] // width
        term = pairs[_firsts(pairs)] // stride
        low = int(term[0])
        df[low : int(term[-1]) + 1] += np.bincount(term - low)
    return df


def pair_rows(
    keys: np.ndarray,
    tf: np.ndarray,
    df: np.ndarray,
    idf: np.ndarray,
    weights: np.ndarray,
    norms: np.ndarray,
    k1: float,
    stride: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The CSR columns (unit of each (term, unit) pair, pairs in key order) and data (the pair's
    field contributions summed in field order, the order `explain` lists them in)."""
    return pair_block(keys, tf, int(df.sum()), idf, weights, np.ascontiguousarray(norms).ravel(), k1, stride)


def pair_block(
    keys: np.ndarray,
    tf: np.ndarray,
    pairs_total: int,
    idf: np.ndarray,
    weights: np.ndarray,
    norms: np.ndarray,
    k1: float,
    stride: int,
) -> tuple[np.ndarray, np.ndarray]:
    """`pair_rows` of keys whose terms index `idf` (all of an index's, or a merge's block of
    terms renumbered from 0), with `norms` [F, N] flattened (field × N + unit): a copy in
    the keys' own unit × F + field order would cost another F × N floats (56 MB at 1M units)."""
    width = len(weights)
    indices, data = np.empty(pairs_total, dtype=np.int32), np.empty(pairs_total)
    at = 0
    for start, end in blocks(keys, width):
        block = keys[start:end]
        pairs = block // width
        field = block - pairs * width
        term = pairs // stride
        unit = pairs - term * stride
        first = _firsts(pairs)
        contrib = contributions(weights[field], idf[term], tf[start:end], norms[field * stride + unit], k1)
        starts = np.flatnonzero(first)
        indices[at : at + len(starts)] = unit[starts]
        data[at : at + len(starts)] = np.add.reduceat(contrib, starts)
        at += len(starts)
    return indices, data


def renumber(
    keys: np.ndarray, tf: np.ndarray, term_of: np.ndarray, rows: np.ndarray, part_stride: int, stride: int, width: int
) -> tuple[np.ndarray, np.ndarray]:
    """A part's keys (with their tf) in a merged index's numbering: its terms by `term_of`, its
    units by `rows`; `part_stride` and `stride` are the part's and the merged index's unit counts."""
    pair, field = np.divmod(keys, width)
    term, unit = np.divmod(pair, part_stride)
    return (term_of[term].astype(np.int64) * stride + rows[unit]) * width + field, tf


def contributions(weight, idf, tf, norm, k1: float) -> np.ndarray:
    """`term_weight` over arrays, in place, with the same operation order so results are identical."""
    out = weight * idf
    out *= tf * (k1 + 1)
    out /= tf + norm
    return out
