"""core/retrieval/bm25/layout.py: the blocked passes give what one pass over whole arrays gives.

The KBs of the other BM25 tests fit in one block; here blocks of a few keys force every cut,
including cuts that would fall inside a (term, unit) pair's fields.
"""

from __future__ import annotations

import numpy as np
import pytest

from core.retrieval.bm25 import layout as bm25_layout
from core.retrieval.bm25.layout import blocks, contributions, document_frequencies, pair_rows, place_parts

WIDTH = 7


def random_keys(rng: np.random.Generator, terms: int, units: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    keys = np.unique(rng.integers(0, terms * units * WIDTH, size=size))
    return keys, rng.integers(1, 5, size=len(keys)).astype(np.int32)


def whole_array_rows(keys, tf, idf, weights, norms, k1, stride, terms):
    """The reference: every pass over the whole arrays at once."""
    pairs, field = np.divmod(keys, WIDTH)
    term, unit = np.divmod(pairs, stride)
    first = np.ones(len(pairs), dtype=bool)
    first[1:] = pairs[1:] != pairs[:-1]
    df = np.bincount(term[first], minlength=terms)
    contrib = contributions(weights[field], idf[term], tf, norms[field, unit], k1)
    return df, unit[first].astype(np.int32), np.add.reduceat(contrib, np.flatnonzero(first))


@pytest.mark.parametrize(("block", "seed"), [(1, 0), (3, 1), (5, 2), (64, 3), (1 << 16, 4)])
def test_blocked_frequencies_and_rows_equal_one_pass(monkeypatch, block, seed):
    monkeypatch.setattr(bm25_layout, "BLOCK", block)
    rng = np.random.default_rng(seed)
    terms, units, k1 = 40, 30, 1.2
    keys, tf = random_keys(rng, terms, units, 3000)
    norms = rng.uniform(0.3, 2.0, size=(WIDTH, units))
    weights = rng.uniform(0.0, 3.0, size=WIDTH)
    df = document_frequencies(keys, units, WIDTH, terms)
    idf = np.log((units - df + 0.5) / (df + 0.5) + 1)
    want_df, want_indices, want_data = whole_array_rows(keys, tf, idf, weights, norms, k1, units, terms)
    indices, data = pair_rows(keys, tf, df, idf, weights, norms, k1, units)
    np.testing.assert_array_equal(df, want_df)
    np.testing.assert_array_equal(indices, want_indices)
    np.testing.assert_array_equal(data, want_data)  # the same operations in the same order: equal floats


def test_no_block_cuts_a_pair_and_the_blocks_cover_every_key(monkeypatch):
    monkeypatch.setattr(bm25_layout, "BLOCK", 2)
    keys, _ = random_keys(np.random.default_rng(9), 5, 4, 400)
    cuts = list(blocks(keys, WIDTH))
    assert cuts[0][0] == 0 and cuts[-1][1] == len(keys)
    assert all(end == start for (_, end), (start, _) in zip(cuts, cuts[1:]))
    assert all(keys[end] // WIDTH != keys[end - 1] // WIDTH for _, end in cuts[:-1])


def test_no_keys_give_empty_rows():
    empty = np.zeros(0, dtype=np.int64)
    df = document_frequencies(empty, 3, WIDTH, 4)
    indices, data = pair_rows(empty, np.zeros(0, np.int32), df, np.ones(4), np.ones(WIDTH), np.ones((WIDTH, 3)), 1.2, 3)
    assert df.tolist() == [0, 0, 0, 0] and len(indices) == len(data) == 0


@pytest.mark.parametrize("interleaved", [False, True])
def test_placed_parts_are_the_sorted_union_of_their_keys(interleaved):
    rng = np.random.default_rng(5)
    terms, units = 30, 60
    rows = np.arange(units) if not interleaved else rng.permutation(units)
    runs, every_key, every_tf, calls = [], [], [], []
    for number, part_rows in enumerate(np.array_split(rows, 4)):
        part_rows = np.sort(part_rows)
        term = np.sort(rng.choice(terms, size=12, replace=False))
        keys = np.unique(
            (term[rng.integers(0, 12, 200)] * units + part_rows[rng.integers(0, len(part_rows), 200)]) * WIDTH
            + rng.integers(0, WIDTH, 200)
        )
        tf = rng.integers(1, 9, len(keys)).astype(np.int32)
        per_term = np.bincount(np.searchsorted(term, keys // (units * WIDTH)), minlength=len(term))
        every_key.append(keys)
        every_tf.append(tf)

        def renumbered(keys=keys, tf=tf, number=number):
            calls.append(number)
            return keys, tf

        runs.append((term, per_term, renumbered))
    keys, tf = place_parts(runs, terms)
    order = np.argsort(np.concatenate(every_key))
    np.testing.assert_array_equal(keys, np.concatenate(every_key)[order])
    np.testing.assert_array_equal(tf, np.concatenate(every_tf)[order])
    assert calls == [0, 1, 2, 3]  # each part's keys are made once, when it is placed
