"""The BM25F formula's parts, shared by every path that scores (one index, parts of a view, a
merge, a shard under gathered statistics): each path computing them alike is what makes their
scores the same floats. docs/scoring.md states the formula; `bm25_layout.contributions` is
`term_weight` over arrays.

Average field length: averaged over the units that HAVE the field (non-empty token list). An absent
field is not a zero-length document: counting it would shrink avgdl for rare fields (procedure only
exists on Procedure units, condition on a few) and penalise exactly the units that carry them.
"""

from __future__ import annotations

from math import log
from typing import TypeVar

import numpy as np

# `term_weight` takes floats (one term, one field) or arrays of them (`Bm25Index.explain`).
_N = TypeVar("_N", float, np.ndarray)


def length_norm(dl, avgdl, k1: float, b: float):
    """k1 · (1 − b + b · dl / avgdl), the length part of the BM25 denominator."""
    return k1 * (1 - b + b * dl / avgdl)


def idf(units: int, df):
    """log((N − df + 0.5) / (df + 0.5) + 1), of an int or an array of dfs.

    By the C library's scalar log, once per distinct df: numpy's array log takes a SIMD path on
    CPUs that have one (AVX-512), which can differ from the scalar result in the last bit, and a
    shard's coordinator computes one term's idf as a scalar. One function for both keeps a
    sharded score the float one process computes on every machine."""
    if isinstance(df, int | np.integer):
        return log((units - int(df) + 0.5) / (int(df) + 0.5) + 1)
    df = np.asarray(df, dtype=np.int64)
    # A Zipfian vocabulary has few distinct dfs (hundreds at 1M units): a table by df value.
    table = np.zeros(int(df.max(initial=0)) + 1)
    for d in np.flatnonzero(np.bincount(df)).tolist():
        table[d] = log((units - d + 0.5) / (d + 0.5) + 1)
    return table[df]


def term_weight(field_weight: _N, idf: _N, tf: _N, norm: _N, k1: float) -> _N:
    """One field's BM25 contribution for one term; `bm25_layout.contributions` is the same formula over arrays."""
    return field_weight * idf * (tf * (k1 + 1)) / (tf + norm)


def field_totals(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per field of lengths [F, N]: how many units have it, and their summed length."""
    return (lengths > 0).sum(axis=1), lengths.sum(axis=1, dtype=np.int64)


def average_lengths(lengths: np.ndarray) -> np.ndarray:
    """Mean length per field over units that have the field (see module docstring); 1 if none do."""
    present = (lengths > 0).sum(axis=1)
    return np.where(present > 0, lengths.sum(axis=1) / np.maximum(present, 1), 1.0)
