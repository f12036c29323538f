"""`Bm25Index.merge`: one index from per-file parts equals a build over all their units."""

from __future__ import annotations

import random

import numpy as np
import pytest

from core.config import Bm25Config
from core.retrieval.bm25 import Bm25Index
from core.text import tokenize
from core.units import Role
from tests.core.store_kb import WORDS, unit

CONFIG = Bm25Config()


def split(seed: int, parts: int, size: int = 120, contiguous: bool = False):
    """Units in result order, and the parts, each with its rows in the result: random subsets,
    or (`contiguous`, as files usually are) runs of rows given in reverse order."""
    rng = random.Random(seed)
    units = sorted((unit(rng, f"src{n % 5}", n) for n in range(size)), key=lambda u: u.id)
    owner = [row * parts // size if contiguous else rng.randrange(parts) for row in range(size)]
    groups = []
    for number in range(parts):
        rows = np.array([row for row, o in enumerate(owner) if o == number], dtype=np.int64)
        if len(rows):
            groups.append((Bm25Index.build([units[r] for r in rows.tolist()], CONFIG), rows))
    return units, groups[::-1] if contiguous else groups


@pytest.mark.parametrize(("seed", "parts", "contiguous"), [(1, 1, False), (2, 3, False), (3, 7, False), (4, 40, False), (6, 5, True), (7, 1, True)])
def test_a_merge_of_parts_scores_and_explains_like_one_build(seed, parts, contiguous):
    units, groups = split(seed, parts, contiguous=contiguous)
    fresh = Bm25Index.build(units, CONFIG)
    merged = Bm25Index.merge(groups, (fresh.unit_ids, fresh.role_rows()), CONFIG)
    assert merged.unit_ids == fresh.unit_ids
    assert set(merged._vocab) == set(fresh._vocab)
    np.testing.assert_array_equal(merged.field_lengths(), fresh.field_lengths())
    rng = random.Random(seed)
    for _ in range(12):
        tokens = tokenize(" ".join(rng.choices(WORDS, k=rng.randint(1, 4))))
        for roles in ([], [Role.PROCEDURE]):
            np.testing.assert_allclose(merged.scores(tokens, roles), fresh.scores(tokens, roles), rtol=0, atol=1e-12)
            assert merged.top_k(tokens, roles, 10) == fresh.top_k(tokens, roles, 10)
        some = rng.choice(units).id
        assert merged.explain(tokens, some, []) == fresh.explain(tokens, some, [])
        assert merged.matched_terms(tokens, some) == fresh.matched_terms(tokens, some)
    for word in tokenize(" ".join(WORDS)):
        assert merged.doc_freq(word) == fresh.doc_freq(word)
        for got, want in zip(merged.term_postings(word), fresh.term_postings(word), strict=True):
            np.testing.assert_array_equal(got, want)


def test_a_merge_of_parts_survives_the_store_round_trip():
    units, groups = split(5, 4)
    fresh = Bm25Index.build(units, CONFIG)
    merged = Bm25Index.merge(groups, (fresh.unit_ids, fresh.role_rows()), CONFIG)
    ids, words, arrays = merged.to_arrays()
    reread = Bm25Index.from_arrays(ids, words, arrays, CONFIG)
    tokens = tokenize("tide hive varroa")
    assert reread.top_k(tokens, [], 20) == fresh.top_k(tokens, [], 20)


def test_merging_no_parts_gives_an_empty_index():
    empty = Bm25Index.merge([], ([], np.zeros(0, np.int8)), CONFIG)
    assert len(empty) == 0 and empty.top_k(["tide"], [], 5) == []
