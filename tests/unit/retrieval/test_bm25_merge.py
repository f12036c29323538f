"""`merge`: one index from per-file parts equals a build over all their units."""

from __future__ import annotations

import random

import numpy as np
import pytest

from core.infra.config import Bm25Config
from core.retrieval.bm25.index import Bm25Index
from core.retrieval.bm25.merge import merge
from core.text.tokenizer import tokenize
from core.units import Role
from tests.support.store_kb import WORDS, unit

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


@pytest.mark.parametrize(
    ("seed", "parts", "contiguous"),
    [(1, 1, False), (2, 3, False), (3, 7, False), (4, 40, False), (6, 5, True), (7, 1, True)],
)
def test_a_merge_of_parts_scores_and_explains_like_one_build(seed, parts, contiguous):
    units, groups = split(seed, parts, contiguous=contiguous)
    fresh = Bm25Index.build(units, CONFIG)
    merged = merge(groups, (fresh.unit_ids, fresh.role_rows()), CONFIG)
    assert_same_index(merged, fresh, units, random.Random(seed))


def assert_same_index(got: Bm25Index, fresh: Bm25Index, units, rng: random.Random) -> None:
    """Same units, lengths, scores, top k, explanations and postings of every word."""
    assert got.unit_ids == fresh.unit_ids
    assert set(got.words()) == set(fresh.words())
    np.testing.assert_array_equal(got.field_lengths(), fresh.field_lengths())
    for _ in range(12):
        tokens = tokenize(" ".join(rng.choices(WORDS, k=rng.randint(1, 4))))
        for roles in ([], [Role.PROCEDURE]):
            np.testing.assert_allclose(got.scores(tokens, roles), fresh.scores(tokens, roles), rtol=0, atol=1e-12)
            assert got.top_k(tokens, roles, 10) == fresh.top_k(tokens, roles, 10)
        some = rng.choice(units).id
        assert got.explain(tokens, some, []) == fresh.explain(tokens, some, [])
        assert got.matched_terms(tokens, some) == fresh.matched_terms(tokens, some)
    for word in fresh._vocab:
        assert got.doc_freq(word) == fresh.doc_freq(word)
        for mine, want in zip(got.term_postings(word), fresh.term_postings(word), strict=True):
            np.testing.assert_array_equal(mine, want)


def test_a_merge_of_parts_survives_the_store_round_trip():
    units, groups = split(5, 4)
    fresh = Bm25Index.build(units, CONFIG)
    merged = merge(groups, (fresh.unit_ids, fresh.role_rows()), CONFIG)
    ids, words, arrays = merged.to_arrays()
    reread = Bm25Index.from_arrays(ids, words, arrays, CONFIG)
    tokens = tokenize("tide hive varroa")
    assert reread.top_k(tokens, [], 20) == fresh.top_k(tokens, [], 20)


@pytest.mark.parametrize("name", Bm25Index.ARRAYS)
def test_stored_arrays_that_do_not_fit_together_are_refused(name):
    # A store's arrays are MAC-checked, but one cut short by a bug must fail loudly, not index
    # past a posting list's end.
    units, _ = split(6, 1)
    ids, words, arrays = Bm25Index.build(units, CONFIG).to_arrays()
    arrays[name] = arrays[name][..., :-1]
    with pytest.raises(ValueError, match="do not fit together"):
        Bm25Index.from_arrays(ids, words, arrays, CONFIG)


def test_a_part_read_with_its_stored_word_list_answers_alike_without_a_dict():
    # A per-file part from the store looks its words up in the stored text (core/retrieval/bm25/words.py).
    from core.retrieval.bm25.words import WordList, encode

    units, groups = split(8, 2)
    ids, words, arrays = groups[0][0].to_arrays()
    listed = Bm25Index.from_arrays(ids, words, arrays, CONFIG)
    part = Bm25Index.from_arrays(ids, WordList(encode(words), len(words)), arrays, CONFIG)
    for query in ("tide hive varroa", "varroa varroa unknownword", ""):
        tokens = tokenize(query)
        assert part.top_k(tokens, [Role.DEFINITION], 10) == listed.top_k(tokens, [Role.DEFINITION], 10)
        assert [part.doc_freq(t) for t in tokens] == [listed.doc_freq(t) for t in tokens]
    assert isinstance(part._vocab, WordList) and part.words() == words


def test_merging_no_parts_gives_an_empty_index():
    empty = merge([], ([], np.zeros(0, np.int8)), CONFIG)
    assert len(empty) == 0 and empty.top_k(["tide"], [], 5) == []


@pytest.mark.parametrize("order", ["increasing", "shuffled"])
def test_a_subset_equals_a_build_over_its_units(order):
    rng = random.Random(9)
    units = [unit(rng, f"src{n % 3}", n) for n in range(90)]
    whole = Bm25Index.build(units, CONFIG)
    rows = np.array(sorted(rng.sample(range(len(units)), 37)), dtype=np.int64)
    if order == "shuffled":
        rng.shuffle(rows)
    chosen = [units[r] for r in rows.tolist()]
    sub = whole.subset(rows)
    assert_same_index(sub, Bm25Index.build(chosen, CONFIG), chosen, rng)
    kept = set(sub.words())
    assert sub.words() == [word for word in whole.words() if word in kept]
