"""Current-turn units in a side index: scores over the view's index plus the side index equal a
from-scratch BM25 build over the view with those units, and the KB view's index is not rebuilt."""

from __future__ import annotations

import numpy as np
import pytest

from core.infra.config import RetrievalConfig, load_retrieval_config
from core.kb.indexes import IndexCache
from core.kb.knowledge_base import KnowledgeBase
from core.plugins.seed import current_turn_units
from core.retrieval.bm25.index import Bm25Index
from core.retrieval.bm25.parts import Bm25Parts
from core.retrieval.rules import RuleSet
from core.store import SegmentStore
from core.text.tokenizer import tokenize
from core.units import Caller, KnowledgeUnit, Role
from tests.support.store_kb import write_kb

CONTEXT = ["The harbour buoy marks the shoal at neap tide.", "Our apiary smoker calms the colony before a swarm."]


def context_units() -> list:
    """Two current-turn units as the seed detector makes them, one per sentence (distinct ids)."""
    units = []
    for number, sentence in enumerate(CONTEXT):
        (unit,) = current_turn_units([sentence])
        units.append(unit.model_copy(update={"id": f"current-turn::chunk-000::unit-{number:03d}"}))
    return units


QUESTIONS = ["Where is the shoal buoy?", "How does the smoker calm a swarm?", "tide chart datum", "varroa mite"]


@pytest.fixture
def kb(tmp_path) -> KnowledgeBase:
    write_kb(tmp_path / "kb")
    return KnowledgeBase.load([tmp_path / "kb"], store=SegmentStore(tmp_path / "cache"))


@pytest.mark.parametrize("caller", [Caller(), Caller(tags=frozenset({"crew:night"}), region="NORTH")])
def test_side_index_scores_equal_a_from_scratch_build(kb, config_path, caller):
    config = load_retrieval_config(config_path)
    cache = IndexCache(config, RuleSet())
    view = kb.view(caller)
    extended = view.with_extra(context_units())
    assert len(extended.extra) == 2
    assert [u.id for u in extended.units] == sorted(u.id for u in (*view.units, *extended.extra))
    assert all(extended.get(u.id) is u and u.current_turn for u in extended.extra)
    asked = [u.id for u in extended.units][::-1] + ["nobody::chunk-000::unit-000"]
    roles, current = extended.roles_of(asked)
    assert roles == {uid: extended.role_of(uid) for uid in asked} and roles[asked[-1]] is None
    assert list(roles) == asked  # in the order asked, as fusion pools them
    assert current == {uid for uid in asked if extended.is_current(uid)} == {u.id for u in extended.extra}
    parts = cache.for_view(extended).bm25
    assert isinstance(parts, Bm25Parts)
    fresh = Bm25Index.build(extended.units, config.bm25)
    for question in QUESTIONS:
        terms = tokenize(question)
        for roles in ((), (Role.PROCEDURE, Role.DEFINITION)):
            by_id = dict(zip(parts.unit_ids, parts.scores(terms, roles), strict=True))
            expected = dict(zip(fresh.unit_ids, fresh.scores(terms, roles), strict=True))
            assert by_id.keys() == expected.keys()
            np.testing.assert_allclose([by_id[u] for u in expected], list(expected.values()), rtol=0, atol=1e-9)
            got, want = parts.top_k(terms, roles, 10), fresh.top_k(terms, roles, 10)
            assert [u for u, _ in got] == [u for u, _ in want]
            np.testing.assert_allclose([s for _, s in got], [s for _, s in want], rtol=0, atol=1e-9)
            for unit_id, _ in want[:3]:
                a, b = parts.explain(terms, unit_id, roles), fresh.explain(terms, unit_id, roles)
                assert [(c.term, c.field, c.tf, c.df, c.dl) for c in a.contributions] == [
                    (c.term, c.field, c.tf, c.df, c.dl) for c in b.contributions
                ]
                np.testing.assert_allclose(
                    [c.contribution for c in a.contributions], [c.contribution for c in b.contributions], atol=1e-9
                )
                assert a.raw == pytest.approx(b.raw, abs=1e-9) and a.role_boost == b.role_boost
                # What a trace lists per candidate, without the raw score it already has.
                assert parts.contributions(terms, unit_id) == a.contributions
                assert fresh.contributions(terms, unit_id) == b.contributions
                assert parts.matched_terms(terms, unit_id) == fresh.matched_terms(terms, unit_id)


def test_a_question_with_context_reuses_the_views_index(kb, config_path):
    config: RetrievalConfig = load_retrieval_config(config_path)
    cache = IndexCache(config, RuleSet())
    view = kb.view(Caller())
    base_index = cache.for_view(view).bm25
    for sentence in CONTEXT:
        parts = cache.for_view(view.with_extra(current_turn_units([sentence]))).bm25
        assert parts.parts[:-1] == base_index.parts
        assert len(parts.parts[-1]) == 1


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_slice_of_an_index_scores_like_an_index_of_its_rows(kb, config_path, seed):
    from core.retrieval.bm25.parts import Bm25Slice

    config = load_retrieval_config(config_path).bm25
    units = list(kb.view(Caller()).units)
    rng = np.random.default_rng(seed)
    kept = np.flatnonzero(rng.random(len(units)) < 0.7)
    whole = Bm25Index.build(units, config)
    sliced = Bm25Slice(whole, rng.permutation(kept))
    fresh = Bm25Index.build([units[i] for i in kept], config)
    assert list(sliced.unit_ids) == fresh.unit_ids
    for got, want in zip(sliced.field_totals(), fresh.field_totals(), strict=True):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(sliced.field_lengths(), fresh.field_lengths())
    words = {t for q in QUESTIONS for t in tokenize(q)} | set(fresh._vocab) | set(whole._vocab)
    for term in words:
        assert sliced.doc_freq(term) == fresh.doc_freq(term)
        for got, want in zip(sliced.term_postings(term), fresh.term_postings(term), strict=True):
            np.testing.assert_array_equal(got, want)
    gone = units[int(np.setdiff1d(np.arange(len(units)), kept)[0])].id
    assert sliced.row_of(gone) is None and sliced.row_of(fresh.unit_ids[3]) == 3
    # With a side part, the combined scores are the from-scratch scores of those rows.
    side = context_units()
    parts = Bm25Parts([sliced, Bm25Index.build(side, config)], config)
    scratch = Bm25Index.build([*[units[i] for i in kept], *side], config)
    for question in QUESTIONS:
        tokens = tokenize(question)
        by_id = dict(zip(parts.unit_ids, parts.scores(tokens, [Role.PROCEDURE]), strict=True))
        np.testing.assert_allclose(
            [by_id[u] for u in scratch.unit_ids], scratch.scores(tokens, [Role.PROCEDURE]), rtol=0, atol=1e-9
        )


def test_parts_score_the_very_floats_of_one_index_over_the_same_units() -> None:
    """Not only to 1e-9: each unit's fields are summed before the query's terms, as one index's
    (term, unit) pairs hold them. Adding fields and terms in one run differed in the last bit,
    so a sharded `ask --json` (the shards score parts) differed from one process's that had a
    merged index cached. Units with several fields holding a term, queries with repeated terms."""
    words = "kiln glaze copper firing shelf clay stoneware reduction cone ash red vent pot wheel slip".split()
    roles = [role for role in Role if role is not Role.PROCEDURE]
    units = [
        KnowledgeUnit(
            id=f"s{n % 3}::chunk-{n:03d}::unit-000",
            source_id=f"s{n % 3}",
            chunk_id=f"chunk-{n:03d}",
            role=roles[n % len(roles)],
            topic=f"{words[n % 15]} {words[(n * 7) % 15]}",
            claim=" ".join(words[(n * k + 3) % 15] for k in range(3 + n % 12)).capitalize() + ".",
            **({"condition": f"When the {words[(n * 5) % 15]} is hot."} if n % 4 == 0 else {}),
        )
        for n in range(300)
    ]
    config = load_retrieval_config().bm25
    whole = Bm25Index.build(units, config)
    parts = Bm25Parts([Bm25Index.build(units[:100], config), Bm25Index.build(units[100:], config)], config)
    for n in range(120):
        query = tokenize(" ".join(words[(n * k * 11 + k) % 15] for k in range(1 + n % 6)))
        for preferred in ((), (Role.DEFINITION,)):
            assert whole.scores(query, preferred).tolist() == parts.scores(query, preferred).tolist(), query


def test_a_views_recent_bm25_pools_are_reused_from_the_index_that_ranked_them(kb, config_path, monkeypatch):
    """A question re-planned to another kb profile asks for the same BM25 pool: ranked once."""
    config = load_retrieval_config(config_path)
    indexes = IndexCache(config, RuleSet()).for_view(kb.view(Caller()))
    parts = indexes.bm25
    assert isinstance(parts, Bm25Parts)
    searched: list[Bm25Index | Bm25Parts] = []

    def counted(index):
        top_k = index.top_k
        monkeypatch.setattr(index, "top_k", lambda *args: searched.append(index) or top_k(*args))

    counted(parts)
    terms, roles = tokenize(QUESTIONS[0]), (Role.PROCEDURE,)
    expected = dict(parts.top_k(terms, roles, 50))
    searched.clear()
    first = indexes.bm25_pool(terms, roles, 50)
    assert first == expected and searched == [parts]
    first["nobody::chunk-000::unit-000"] = 1.0  # a caller's copy: what it changes stays its own
    assert indexes.bm25_pool(terms, roles, 50) == expected and searched == [parts]
    assert indexes.bm25_pool(terms, (), 50) == dict(parts.top_k(terms, (), 50))  # other roles: other pool
    # The view's index replaced by its merged one: the pool is ranked again, by the new index.
    indexes.merge_bm25()
    merged = indexes.bm25
    assert isinstance(merged, Bm25Index)
    counted(merged)
    searched.clear()
    assert indexes.bm25_pool(terms, roles, 50) == expected and searched == [merged]
