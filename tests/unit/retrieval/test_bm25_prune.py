"""Pruned BM25 top-k (`core/retrieval/bm25/prune.py`) returns exactly what the exhaustive path
returns: the same ids, the same float scores, the same tie order."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.infra.config import Bm25Config
from core.retrieval.bm25 import prune_gate as bm25_prune_gate
from core.retrieval.bm25 import select as bm25_select
from core.retrieval.bm25.fields import FIELDS
from core.retrieval.bm25.index import Bm25Index
from core.retrieval.kernel_gate import numba_installed
from core.units import KnowledgeUnit, Role
from tests.support.fuzz_settings import bounded

# Few words, so posting lists run past a block (64) and many units tie exactly.
WORDS = ["kiln", "glaze", "clay", "wheel", "fire", "cone", "slip", "bisque"]
UNKNOWN = "zyzzyva"
KERNELS = ["numba", "python"] if numba_installed() else ["python"]


def bm25_prune():
    """The module, imported when a test first runs rather than at collection: importing it
    compiles the kernel (or loads numba's cache), which every xdist worker would do at once in a
    clean clone though only the one running this file uses it."""
    from core.retrieval.bm25 import prune

    return prune


def kernel_named(name: str):
    prune = bm25_prune()
    return prune.search if name == "numba" else prune._search


def units_of(draws: list[tuple[int, list[int], list[int]]]) -> list[KnowledgeUnit]:
    roles, units = list(Role), []
    for n, (role_no, topic, body) in enumerate(draws):
        role, text = roles[role_no % len(roles)], " ".join(WORDS[w] for w in body) or "pots"
        units.append(
            KnowledgeUnit(
                id=f"kb::c::u{n:04d}",
                source_id="kb",
                chunk_id="c",
                role=role,
                topic=" ".join(WORDS[w] for w in topic) or "pots",
                **{"procedure" if role is Role.PROCEDURE else "claim": text},
            )
        )
    return units


unit_draw = st.tuples(
    st.integers(0, 20),
    st.lists(st.integers(0, len(WORDS) - 1), max_size=3),
    st.lists(st.integers(0, len(WORDS) - 1), max_size=6),
)


@st.composite
def cases(draw):
    # Repeated units tie exactly, so the unit-id tie-break decides the k-th place.
    base = draw(st.lists(unit_draw, min_size=1, max_size=40))
    copies = draw(st.integers(1, 8))
    units = units_of([base[i % len(base)] for i in range(len(base) * copies)])
    weights = {field: draw(st.sampled_from([0.0, 0.3, 1.0, 2.5])) for field in FIELDS}
    config = Bm25Config(field_weights=weights, role_boost=draw(st.sampled_from([1.0, 1.3, 4.0])))
    query = draw(st.lists(st.sampled_from([*WORDS, UNKNOWN]), max_size=8))  # repeats count twice
    roles = draw(st.sets(st.sampled_from(list(Role)), max_size=3))
    k = draw(st.integers(1, len(units) + 5))
    view = draw(st.one_of(st.none(), st.lists(st.booleans(), min_size=len(units), max_size=len(units))))
    return units, config, query, roles, k, view


def exhaustive(index: Bm25Index, query: list[str], roles, k: int) -> list[tuple[str, float]]:
    """The definition: every unit scored, score > 0, by score descending then id ascending."""
    scores = index.scores(query, roles)
    ranked = sorted((-float(scores[row]), index.unit_ids[row]) for row in np.flatnonzero(scores > 0))
    return [(unit_id, -negated) for negated, unit_id in ranked[:k]]


def unpruned(index: Bm25Index, query: list[str], roles, k: int) -> list[list[tuple[str, float]]]:
    """What `top_k` returns without the kernel: scoring only the units the terms hold (sparse),
    and scoring every unit (dense)."""
    found = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bm25_prune_gate, "kernel_for", lambda postings: None)
        for share in (0, len(index) + 1):  # postings · 0 ≤ N always; postings · (N + 1) > N once any
            patch.setattr(bm25_select, "SPARSE_SHARE", share)
            found.append(index.top_k(query, roles, k))
    return found


@bounded(120)
@given(cases())
def test_pruned_top_k_equals_the_exhaustive_path(case):
    units, config, query, roles, k, view = case
    index = Bm25Index.build(units, config)
    if view is not None:  # a restricted view: an index over the permitted rows only
        index = index.subset(np.flatnonzero(view).astype(np.int64))
    expected = exhaustive(index, query, roles, k)
    assert unpruned(index, query, roles, k) == [expected, expected]
    for name in KERNELS:
        got = index.top_k(query, roles, k, kernel=kernel_named(name))
        assert got == expected
        assert {unit_id for unit_id, _ in got} <= set(index.unit_ids)
        for unit_id, score in got:  # explain (the exhaustive path) agrees with every pruned score
            assert index.explain(query, unit_id, roles).raw == score


def zipf_units(rng: random.Random, n: int) -> list[KnowledgeUnit]:
    """n units whose words follow a Zipf law, as text does: common terms run over many blocks."""
    zipf = [1 / (rank + 1) for rank in range(len(WORDS))]
    draws = [
        (
            rng.randrange(20),
            rng.choices(range(len(WORDS)), zipf, k=rng.randrange(1, 4)),
            rng.choices(range(len(WORDS)), zipf, k=rng.randrange(7)),
        )
        for _ in range(n)
    ]
    return units_of(draws)


def assert_random_queries_match(rng: random.Random, index: Bm25Index, kernel: str, queries: int) -> None:
    for _ in range(queries):
        query, k = rng.choices(WORDS, k=rng.randrange(1, 7)), rng.choice([1, 3, 10, 30, 500])
        roles = set(rng.sample(list(Role), 2))
        assert index.top_k(query, roles, k, kernel=kernel_named(kernel)) == exhaustive(index, query, roles, k)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("seed", range(3))
def test_pruning_over_zipf_words_and_many_blocks_matches(kernel, seed):
    """400 units: common terms become look-ups judged block by block (a bound made 30% too
    tight fails here)."""
    rng = random.Random(seed)
    assert_random_queries_match(rng, Bm25Index.build(zipf_units(rng, 400), Bm25Config()), kernel, 20)


@pytest.mark.parametrize("kernel", [name for name in KERNELS if name == "numba"])
@pytest.mark.parametrize("seed", range(3))
def test_pruning_over_2000_zipf_units_and_many_queries_matches(kernel, seed):
    """Long lists of some 30 blocks under many queries: a block-max WAND variant that skipped
    units only the terms other than the streamed one hold (branch h41bmw, docs/benchmarks.md)
    lost a winner in 15 of these 300 queries and passed every other test here."""
    rng = random.Random(seed)
    assert_random_queries_match(rng, Bm25Index.build(zipf_units(rng, 2000), Bm25Config()), kernel, 100)


def test_block_maxima_bound_every_posting_and_name_each_blocks_last_row():
    index = Bm25Index.build(units_of([(n, [n % 3], [n % 5, 4]) for n in range(300)]), Bm25Config())
    arrays = index.to_arrays()[2]
    indptr, indices, data = arrays["indptr"], arrays["indices"], arrays["data"]
    prune = bm25_prune()
    maxima = prune.block_maxima(indptr, indices, data)
    for term in range(len(indptr) - 1):
        start, end = int(indptr[term]), int(indptr[term + 1])
        assert maxima.term_max[term] == data[start:end].max()
        blocks = range(int(maxima.first[term]), int(maxima.first[term + 1]))
        assert len(blocks) == -(-(end - start) // prune.BLOCK)
        for number, block in enumerate(blocks):
            lo = start + number * prune.BLOCK
            hi = min(lo + prune.BLOCK, end)
            assert maxima.block_max[block] == data[lo:hi].max()
            assert maxima.block_last[block] == indices[hi - 1]


def test_a_big_query_loads_the_kernel_in_the_background_and_waits_for_nothing():
    gate = bm25_prune_gate
    if not gate._GATE.started:  # no big query in this process yet: a small one loads nothing
        assert gate.kernel_for(lambda: gate.PRUNE_FROM - 1) is None
        assert not gate._GATE.started
    first = gate.kernel_for(lambda: gate.PRUNE_FROM)  # None while loading, unless a test before loaded it
    prune = bm25_prune()
    assert first in (None, prune.search if prune.COMPILED else None)
    assert gate.wait_until_loaded(120) is prune.COMPILED
    loaded = prune.search if prune.COMPILED else None
    assert gate.kernel_for(lambda: gate.PRUNE_FROM) is loaded
    assert gate.kernel_for(lambda: 1) is loaded  # once loaded, small queries take it too
    counted: list[int] = []
    assert gate.kernel_for(lambda: counted.append(1) or 1) is loaded
    assert counted == ([] if prune.COMPILED else [1])  # once loaded, the postings go uncounted


def test_only_a_query_for_few_units_against_the_index_asks_for_the_kernel():
    """For many units against the index's size (a lane's pool of 1,000 at 100k units) the
    exhaustive path is the faster: such a query neither takes the kernel nor starts loading it,
    and finds what the definition finds."""
    units = units_of([(n, [n % 3], [n % 8, (n * 5) % 8]) for n in range(200)])
    index, query = Bm25Index.build(units, Bm25Config()), ["kiln", "glaze", "clay"]
    asked: list[int] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bm25_prune_gate, "UNITS_PER_PRUNED_K", 10)  # pruned up to k = 20 of 200
        patch.setattr(bm25_prune_gate, "kernel_for", lambda postings: asked.append(postings))
        assert index.top_k(query, [], 21) == exhaustive(index, query, [], 21)
        assert asked == []
        index.top_k(query, [], 20)
        assert len(asked) == 1


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("late", [70, 700, 1900])
def test_a_long_lists_bound_in_a_window_covers_every_block_the_window_spans(kernel, late):
    """ "clay" (stemmed "clai") is in every unit, once, except three times in a few units from row
    `late`; "kiln" is in every 50th unit, so its one block makes a window over all 2,000 rows,
    across ~30 of clay's blocks. The winners hold kiln and three clays: clay's bound in that
    window must be the largest of all those blocks, not the first one's (single clays only)."""
    draws = []
    for n in range(2000):
        clays = [2, 2, 2] if late <= n < late + 120 and n % 10 == 0 else [2]
        draws.append((0, [1, 3], (clays + [0] if n % 50 == 0 else clays + [4]) + [5] * (4 - len(clays))))
    index = Bm25Index.build(units_of(draws), Bm25Config())
    for k in (1, 2, 3, 10):
        expected = exhaustive(index, ["kiln", "clai"], set(), k)
        assert index.top_k(["kiln", "clai"], set(), k, kernel=kernel_named(kernel)) == expected
        winner = index.explain(["clai"], expected[0][0], set())
        assert winner.contributions[0].tf == 3  # the case is what the docstring says


@pytest.mark.parametrize("kernel", KERNELS)
def test_a_rare_terms_block_over_more_rows_than_a_window_matches(kernel):
    """ "kiln" is in every 101st of 9,000 units, so its one block spans more rows than a window
    may (`WINDOW`): windows end at that span, the next starts at the next row an essential term
    holds, and every unit past the first window is still scored. The other words follow a Zipf
    law, so some become non-essential once the bar rises."""
    prune = bm25_prune()
    assert 101 * prune.BLOCK > prune.WINDOW
    rng = random.Random(11)
    common = range(1, len(WORDS))
    zipf = [1 / rank for rank in range(1, len(WORDS))]
    draws = [
        (n, rng.choices(common, zipf, k=rng.randrange(1, 3)), rng.choices(common, zipf, k=rng.randrange(4)))
        for n in range(9000)
    ]
    index = Bm25Index.build(
        units_of([(r, t, b + [0] if n % 101 == 0 else b) for n, (r, t, b) in enumerate(draws)]), Bm25Config()
    )
    tokens = ["kiln", "glaze", "clai", "wheel", "fire", "cone", "slip", "bisqu"]
    for _ in range(12):
        query, k = ["kiln", *rng.choices(tokens[1:], k=rng.randrange(4))], rng.choice([1, 3, 10, 30])
        roles = set(rng.sample(list(Role), 2))
        assert index.top_k(query, roles, k, kernel=kernel_named(kernel)) == exhaustive(index, query, roles, k)
