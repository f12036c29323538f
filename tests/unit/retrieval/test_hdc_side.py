"""HDC for a view extended by a request's current-turn units (core/retrieval/hdc/side.py): the
base view's index plus a side index of those units scores exactly as a build over the extended
view, in its row order, never rebuilds the base, and never shows a unit the caller may not see."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.infra.config import load_retrieval_config
from core.kb.indexes import IndexCache
from core.kb.knowledge_base import KnowledgeBase
from core.retrieval.hdc.index import HdcIndex
from core.retrieval.hdc.side import HdcWithSide
from core.retrieval.lanes import hdc_pool, hdc_question
from core.retrieval.rules import RuleSet
from core.store import SegmentStore
from core.text.tokenizer import tokenize
from core.units import Act, Caller, KnowledgeUnit, Role
from tests.support.store_kb import write_kb

ROOT = Path(__file__).resolve().parents[3]
PUBLIC, NIGHT = Caller(), Caller(tags=frozenset({"crew:night"}))
QUESTIONS = ["hive tide swarm", "varroa mite colony", "neap harbour chart", "sextant almanac"]


def turn_unit(uid: str, topic: str, claim: str) -> KnowledgeUnit:
    source, chunk, _ = uid.split("::")
    return KnowledgeUnit(
        id=uid, source_id=source, chunk_id=f"{source}::{chunk}", role=Role.EXPLANATION, topic=topic, claim=claim
    )


# Ids that sort before, among and after the KB's (notesN::chunk-NNN::unit-NNN).
EXTRA = [
    turn_unit("aaa::c::u0", "sextant almanac", "Noon sight. The sextant reads the sun's altitude over the swell."),
    turn_unit("notes1::chunk-001::u5", "harbour chart", "Neap tide at the harbour bar. Slack water follows."),
    turn_unit("zzz::c::u9", "varroa count", "A sugar roll counts varroa mite on the colony's bees!"),
]


def config(**hdc_options):
    loaded = load_retrieval_config(ROOT / "config")
    return loaded.model_copy(update={"hdc": loaded.hdc.model_copy(update=hdc_options)})


@pytest.fixture(scope="module")
def kb(tmp_path_factory) -> KnowledgeBase:
    root = tmp_path_factory.mktemp("side")
    write_kb(root / "kb", files=3, per_file=30)
    return KnowledgeBase.load([root / "kb"], store=SegmentStore(root / "cache"))


def assert_same_hdc(index, fresh: HdcIndex, feedback: list[str]) -> None:
    assert list(index.unit_ids) == fresh.unit_ids and len(index) == len(fresh)
    for question in QUESTIONS:
        for act in (Act.DEFINE, Act.EXPLAIN):
            query = hdc_question(index, tokenize(question), act, index.config, feedback)
            expected = hdc_question(fresh, tokenize(question), act, fresh.config, feedback)
            np.testing.assert_array_equal(query.text, expected.text)
            np.testing.assert_array_equal(index.scores(query), fresh.scores(expected))
            assert list(hdc_pool(index, query, index.config).items()) == list(
                hdc_pool(fresh, expected, fresh.config).items()
            )
            for uid in (*feedback, fresh.unit_ids[0], fresh.unit_ids[-1]):
                assert index.field_similarities(query, uid) == fresh.field_similarities(expected, uid)
                assert index.unit_ids.index(uid) == fresh.unit_ids.index(uid)


@pytest.mark.parametrize("caller", [PUBLIC, NIGHT], ids=["public", "night-crew"])
def test_current_turn_units_score_in_a_side_index_as_a_build_over_the_view(kb: KnowledgeBase, caller: Caller) -> None:
    cfg = config()
    cache = IndexCache(cfg, RuleSet())
    base = kb.view(caller)
    base_index = cache.for_view(base).hdc
    encoded = cache.vectors.encoded
    view = base.with_extra(EXTRA)
    index = cache.for_view(view).hdc
    assert isinstance(index, HdcWithSide) and index.base is base_index  # the base is not rebuilt
    assert cache.vectors.encoded - encoded == len(EXTRA)  # only the request's units are encoded
    fresh = HdcIndex.build(view.units, cfg.hdc)
    assert [fresh.unit_ids.index(u.id) for u in EXTRA] == [0, fresh.unit_ids.index(EXTRA[1].id), len(fresh) - 1]
    assert_same_hdc(index, fresh, feedback=[EXTRA[1].id, base_index.unit_ids[5]])
    with pytest.raises(ValueError):
        index.unit_ids.index("nowhere::c::u0")


def test_a_second_turn_adds_to_the_same_side(kb: KnowledgeBase) -> None:
    cfg = config()
    cache = IndexCache(cfg, RuleSet())
    view = kb.view(PUBLIC).with_extra(EXTRA[:1]).with_extra(EXTRA[1:])
    index = cache.for_view(view).hdc
    assert isinstance(index, HdcWithSide) and len(index.side) == len(EXTRA)
    assert_same_hdc(index, HdcIndex.build(view.units, cfg.hdc), feedback=[EXTRA[2].id])


def test_learned_token_vectors_build_over_the_whole_extended_view(kb: KnowledgeBase) -> None:
    """They depend on every unit of the view, current-turn ones included: no side index."""
    cfg = config(context_vectors=16)
    view = kb.view(PUBLIC).with_extra(EXTRA)
    index = IndexCache(cfg, RuleSet()).for_view(view).hdc
    assert isinstance(index, HdcIndex)
    assert_same_hdc(index, HdcIndex.build(view.units, cfg.hdc), feedback=[EXTRA[0].id])


def test_restricted_units_never_enter_the_extended_index(kb: KnowledgeBase) -> None:
    cache = IndexCache(config(), RuleSet())
    night_only = {u.id for u in kb.view(NIGHT).units} - {u.id for u in kb.view(PUBLIC).units}
    assert night_only  # the KB has units only the night crew may see
    index = cache.for_view(kb.view(PUBLIC).with_extra(EXTRA)).hdc
    assert not night_only & set(index.unit_ids)
    assert not any(uid in index for uid in night_only)
    query = index.query(tokenize("hive tide swarm varroa"), Act.DEFINE)
    assert not night_only & set(hdc_pool(index, query, index.config.model_copy(update={"lane_min_score": 0.0})))
