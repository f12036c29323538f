"""The BM25 merge written a block of terms at a time (`plan_merge`, issue 41) gives what the merge
laid out in memory at once gives (`merge`): the same arrays for any block budget, the same bytes
on disk, and the same ids and scores as a build over all the parts' units."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.infra.config import Bm25Config
from core.retrieval.bm25.index import Bm25Index
from core.retrieval.bm25.merge import STREAMED, merge, plan_merge
from core.retrieval.bm25.words import encode
from core.store.arrays import Streamed, write_arrays
from core.text.tokenizer import tokenize
from core.units import Role
from tests.support.store_kb import WORDS, unit

CONFIG = Bm25Config()


def random_parts(seed: int, parts: int, size: int, contiguous: bool):
    """Units in result order and the parts over them, each with its rows in the result: runs of
    rows (as a view's files are laid out) or random, interleaving subsets."""
    rng = random.Random(seed)
    units = sorted((unit(rng, f"src{n % 5}", n) for n in range(size)), key=lambda u: u.id)
    owner = [row * parts // size if contiguous else rng.randrange(parts) for row in range(size)]
    given = []
    for number in range(parts):
        rows = np.array([row for row, o in enumerate(owner) if o == number], dtype=np.int64)
        if len(rows):
            given.append((Bm25Index.build([units[r] for r in rows.tolist()], CONFIG), rows))
    rng.shuffle(given)
    return units, given


def streamed_index(given, columns, budget: int) -> tuple[Bm25Index, int]:
    """The index from the plan's blocks put together, and how many blocks there were."""
    plan = plan_merge(given, columns, CONFIG, block_keys=budget)
    blocks = list(plan.blocks())
    arrays = dict(plan.arrays)
    for name, dtype in STREAMED.items():
        arrays[name] = np.concatenate([np.zeros(0, dtype), *(block[name] for block in blocks)])
    return Bm25Index.from_arrays(plan.unit_ids, plan.words, arrays, CONFIG), len(blocks)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    parts=st.integers(1, 9),
    size=st.integers(1, 90),
    contiguous=st.booleans(),
    budget=st.one_of(st.just(1), st.integers(2, 400)),
)
def test_any_block_budget_merges_what_the_whole_merge_gives(seed, parts, size, contiguous, budget):
    units, given = random_parts(seed, parts, size, contiguous)
    fresh = Bm25Index.build(units, CONFIG)
    columns = (fresh.unit_ids, fresh.role_rows())
    whole = merge(given, columns, CONFIG)
    streamed, blocks = streamed_index(given, columns, budget)
    if budget == 1:
        assert blocks == len(whole.words())
    ids, words, arrays = streamed.to_arrays()
    want_ids, want_words, want = whole.to_arrays()
    assert (ids, words) == (want_ids, want_words)
    for name in Bm25Index.ARRAYS:
        assert arrays[name].dtype == want[name].dtype and np.array_equal(arrays[name], want[name]), name
    rng = random.Random(seed)
    for _ in range(6):
        tokens = tokenize(" ".join(rng.choices(WORDS, k=rng.randint(1, 4))))
        for roles in ([], [Role.PROCEDURE]):
            got, expected = streamed.top_k(tokens, roles, 10), fresh.top_k(tokens, roles, 10)
            assert [uid for uid, _ in got] == [uid for uid, _ in expected]
            np.testing.assert_allclose([s for _, s in got], [s for _, s in expected], rtol=0, atol=1e-9)
            np.testing.assert_allclose(streamed.scores(tokens, roles), fresh.scores(tokens, roles), rtol=0, atol=1e-9)


@pytest.mark.parametrize("budget", [1, 7, 1 << 20])
def test_the_streamed_folder_is_byte_for_byte_the_whole_merge_s(tmp_path: Path, budget: int):
    units, given = random_parts(11, 6, 150, contiguous=True)
    fresh = Bm25Index.build(units, CONFIG)
    columns = (fresh.unit_ids, fresh.role_rows())
    _, words, arrays = merge(given, columns, CONFIG).to_arrays()
    write_arrays(tmp_path / "whole.idx", {"words.json": encode(words)}, arrays)
    plan = plan_merge(given, columns, CONFIG, block_keys=budget)
    streamed = Streamed(STREAMED, plan.lengths, plan.blocks(), Bm25Index.ARRAYS)
    write_arrays(tmp_path / "streamed.idx", {"words.json": encode(plan.words)}, plan.arrays, None, streamed)
    names = sorted(path.name for path in (tmp_path / "whole.idx").iterdir())
    assert names == sorted(path.name for path in (tmp_path / "streamed.idx").iterdir())
    for name in names:
        assert (tmp_path / "streamed.idx" / name).read_bytes() == (tmp_path / "whole.idx" / name).read_bytes(), name


def test_blocks_keep_to_the_budget_unless_one_term_alone_exceeds_it():
    _, given = random_parts(5, 4, 120, contiguous=True)
    fresh_ids = sorted(uid for part, _ in given for uid in part.unit_ids)
    order = {uid: row for row, uid in enumerate(fresh_ids)}
    roles = np.zeros(len(fresh_ids), np.int8)
    for part, rows in given:
        assert [order[uid] for uid in part.unit_ids] == rows.tolist()
        roles[rows] = part.role_rows()
    budget = 40
    plan = plan_merge(given, (fresh_ids, roles), CONFIG, block_keys=budget)
    seen_oversized = False
    for block in plan.blocks():
        terms = np.unique(block["keys"] // (len(fresh_ids) * 7))
        assert len(block["keys"]) <= budget or len(terms) == 1
        seen_oversized |= len(block["keys"]) > budget
    assert seen_oversized, "the words of 120 units include one in more than 40 (unit, field)s"


def test_a_budget_below_one_key_is_refused_by_name():
    _, given = random_parts(1, 2, 10, contiguous=True)
    ids = sorted(uid for part, _ in given for uid in part.unit_ids)
    with pytest.raises(ValueError, match="block budget"):
        plan_merge(given, (ids, np.zeros(len(ids), np.int8)), CONFIG, block_keys=0)
