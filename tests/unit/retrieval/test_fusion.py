from __future__ import annotations

import random

import pytest

from core.infra.config import FusionConfig, FusionMethod, Lane, Profile
from core.retrieval.fusion import (
    CutReason,
    cut_explanation,
    fuse,
    fused_scores,
    normalise_bm25,
    normalise_by_top,
    sufficiency,
)
from core.units import Act, Role

PROFILE = Profile(lanes=(Lane.BM25,), max_results=2, min_score=0.3, gap_threshold=0.5, min_acceptable_candidates=2)


def _fuse(lanes, roles=None, profile=PROFILE, config=FusionConfig(), preferred=(Role.EXPLANATION,), together=None):
    ids = {uid for scores in lanes.values() for uid in scores}
    return fuse(
        lanes,
        roles=roles or {uid: Role.EXPLANATION for uid in ids},
        bm25_raw={uid: s * 10 for uid, s in lanes.get(Lane.BM25, {}).items()},
        preferred_roles=preferred,
        role_boost=1.3,
        config=config,
        profile=profile,
        together=together,
    )


def test_bm25_normalisation_does_not_stretch_weak_matches() -> None:
    assert normalise_bm25({"a": 0.5, "b": 0.25}) == {"a": 0.5, "b": 0.25}
    assert normalise_bm25({"a": 4.0, "b": 1.0, "c": 0.0}) == {"a": 1.0, "b": 0.25}


def test_tdb_normalisation_gives_best_proof_one() -> None:
    assert normalise_by_top({"a": 0.2, "b": 0.2, "c": 0.1}) == {"a": 1.0, "b": 1.0, "c": 0.5}
    assert normalise_by_top({}) == {}


W_HDC = FusionConfig().weights[Lane.HDC]


def test_weighted_fusion_and_agreement_bonus() -> None:
    config = FusionConfig(agreement_min_score=0.5)
    candidates, _ = _fuse(
        {Lane.BM25: {"a": 1.0, "b": 0.5, "d": 0.9}, Lane.HDC: {"a": 0.6, "c": 0.6, "d": 0.1}}, config=config
    )
    by_id = {c.id: c for c in candidates}
    assert by_id["a"].fused == pytest.approx(1.0 + W_HDC * 0.6 + 0.15)
    assert by_id["a"].agreement is True
    assert by_id["b"].fused == pytest.approx(0.5)
    assert by_id["c"].fused == pytest.approx(W_HDC * 0.6)
    assert by_id["c"].agreement is False
    # Found by both lanes, but HDC's score is below agreementMinScore: a faint match earns no bonus.
    assert by_id["d"].fused == pytest.approx(0.9 + W_HDC * 0.1)
    assert by_id["d"].agreement is False


def test_profile_weights_override_the_fusion_weights() -> None:
    profile = PROFILE.model_copy(update={"weights": {Lane.HDC: 0.9}, "min_score": 0.0})
    candidates, _ = _fuse({Lane.BM25: {"a": 0.5}, Lane.HDC: {"b": 1.0}}, profile=profile)
    assert {c.id: c.fused for c in candidates} == {"b": pytest.approx(0.9), "a": pytest.approx(0.5)}


def test_rrf_counts_every_lane_down_to_the_same_depth() -> None:
    config = FusionConfig(method=FusionMethod.RRF, rrf_weights={Lane.BM25: 1.0, Lane.HDC: 1.0}, rrf_depth=5)
    deep = {f"u{i:02d}": 1.0 - i / 100 for i in range(20)}
    other = {f"v{i:02d}": 1.0 - i / 100 for i in range(20)}
    scores = fused_scores({Lane.BM25: deep, Lane.HDC: other}, config)
    assert set(scores) == {f"u{i:02d}" for i in range(5)} | {f"v{i:02d}" for i in range(5)}
    assert len(fused_scores({Lane.BM25: deep, Lane.HDC: other}, config.model_copy(update={"rrf_depth": 1000}))) == 40


def test_tdb_weight() -> None:
    candidates, _ = _fuse({Lane.TDB: {"a": 1.0}})
    assert candidates[0].fused == pytest.approx(0.85)


def test_cut_reasons_in_order_min_score_gap_max_results() -> None:
    lanes = {Lane.BM25: {"a": 1.0, "b": 0.9, "c": 0.8, "d": 0.45, "e": 0.2}}
    candidates, cutoffs = _fuse(lanes)
    fate = {c.id: (c.kept, c.cut_reason) for c in candidates}
    assert fate == {
        "a": (True, None),
        "b": (True, None),
        "c": (False, CutReason.MAX_RESULTS),
        "d": (False, CutReason.GAP),
        "e": (False, CutReason.MIN_SCORE),
    }
    assert cutoffs.gap_floor == pytest.approx(0.5)
    assert [c.rank for c in candidates] == [1, 2, 3, 4, 5]


def test_a_proofs_leaves_stay_together_through_max_results_only() -> None:
    lanes = {Lane.BM25: {"a": 1.0, "b": 0.9, "c": 0.8, "x": 0.75, "d": 0.45}}
    proof = ("pump feeds gearbox", frozenset({"a", "c", "d"}))
    candidates, cutoffs = _fuse(lanes, together=proof)
    fate = {c.id: (c.kept, c.cut_reason, c.kept_with) for c in candidates}
    # c (cut only by maxResults) joins its kept sibling a; d stays cut by the gap; x is no leaf.
    assert fate == {
        "a": (True, None, ""),
        "b": (True, None, ""),
        "c": (True, None, "pump feeds gearbox"),
        "x": (False, CutReason.MAX_RESULTS, ""),
        "d": (False, CutReason.GAP, ""),
    }
    c = next(c for c in candidates if c.id == "c")
    assert cut_explanation(c, cutoffs) == (
        "kept at rank 3 past maxResults 2: a leaf of the proof of 'pump feeds gearbox', whose other leaves were kept"
    )


def test_a_proof_with_no_kept_leaf_keeps_nothing_extra() -> None:
    lanes = {Lane.BM25: {"a": 1.0, "b": 0.9, "c": 0.8, "x": 0.75}}
    candidates, _ = _fuse(lanes, together=("x relates c", frozenset({"c", "x"})))
    assert [c.id for c in candidates if c.kept] == ["a", "b"]


def test_ties_break_on_unit_id() -> None:
    candidates, _ = _fuse({Lane.BM25: {"b": 0.7, "a": 0.7, "c": 0.7}})
    assert [c.id for c in candidates] == ["a", "b", "c"]


def test_rank_is_score_then_id_whatever_order_the_lanes_pooled_in() -> None:
    # Runs of tied scores between distinct ones (BM25 ties often), pooled in a scrambled order:
    # fusion sorts by score alone first and puts only the tied runs in id order.
    rng = random.Random(7)
    scores = {f"u{i:03d}": rng.choice([0.9, 0.8, 0.8125, 0.5, 0.45, 0.2]) for i in range(300)}
    ids = list(scores)
    rng.shuffle(ids)
    expected = sorted(scores, key=lambda uid: (-scores[uid], uid))
    for pooled in (ids, ids[::-1], expected):
        candidates, _ = _fuse({Lane.BM25: {uid: scores[uid] for uid in pooled}})
        assert [c.id for c in candidates] == expected
        assert [c.rank for c in candidates] == list(range(1, 301))
        assert [c.score for c in candidates] == [scores[uid] for uid in expected]


def test_everything_below_min_score_keeps_nothing() -> None:
    candidates, cutoffs = _fuse({Lane.BM25: {"a": 0.1}})
    assert cutoffs.top_score == 0.0
    assert [c.cut_reason for c in candidates] == [CutReason.MIN_SCORE]


def test_role_boost_is_reported_for_preferred_roles_only() -> None:
    roles = {"a": Role.EXPLANATION, "b": Role.PROCEDURE}
    candidates, _ = _fuse({Lane.BM25: {"a": 1.0, "b": 0.9}}, roles=roles)
    assert {c.id: c.role_boost for c in candidates} == {"a": 1.3, "b": 1.0}


def test_rrf_scales_a_unit_first_in_every_lane_to_one() -> None:
    config = FusionConfig(method=FusionMethod.RRF, rrf_weights={Lane.BM25: 1.0, Lane.HDC: 1.0})
    lanes = {Lane.BM25: {"a": 1.0, "b": 0.5}, Lane.HDC: {"a": 0.3, "b": 0.9}}
    candidates, _ = _fuse(lanes, config=config, profile=PROFILE.model_copy(update={"min_score": 0.0}))
    by_id = {c.id: c for c in candidates}
    k = 60
    expected = (1 / (k + 1) + 1 / (k + 2)) / (2 / (k + 1))
    assert by_id["a"].score == pytest.approx(expected)
    assert by_id["b"].score == pytest.approx(expected)
    # fused is always the weighted sum, with the weighted-sum weights: found by both lanes, the bonus.
    assert by_id["a"].fused == pytest.approx(1.0 + W_HDC * 0.3 + 0.15)


def test_profile_agreement_bonus_overrides_the_fusion_bonus() -> None:
    profile = PROFILE.model_copy(update={"agreement_bonus": 0.3})
    candidates, _ = _fuse({Lane.BM25: {"a": 1.0}, Lane.HDC: {"a": 0.5}}, profile=profile)
    assert candidates[0].fused == pytest.approx(1.0 + W_HDC * 0.5 + 0.3)


def test_weighted_rrf_uses_the_lane_weights() -> None:
    config = FusionConfig(
        method=FusionMethod.RRF, rrf_weights={Lane.BM25: 1.0, Lane.HDC: 0.25}, weights={Lane.HDC: 9.0}
    )
    scores = fused_scores({Lane.BM25: {"a": 1.0, "b": 0.5}, Lane.HDC: {"b": 0.9, "a": 0.3}}, config)
    k = 60
    best = 1.25 / (k + 1)
    assert scores["a"] == pytest.approx((1 / (k + 1) + 0.25 / (k + 2)) / best)
    assert scores["b"] == pytest.approx((1 / (k + 2) + 0.25 / (k + 1)) / best)


def test_sufficiency_rules() -> None:
    candidates, _ = _fuse({Lane.BM25: {"a": 1.0}}, roles={"a": Role.PROCEDURE})
    kept = [c for c in candidates if c.kept]
    assert sufficiency(kept, Act.IMPLEMENT)[0] is True
    assert sufficiency(kept, Act.DEFINE) == (
        False,
        "only 1 unit kept and its role (Procedure) is not preferred for define",
    )
    assert sufficiency([], Act.DEFINE)[0] is False


def test_cut_explanation_quotes_numbers() -> None:
    candidates, cutoffs = _fuse({Lane.BM25: {"a": 1.0, "d": 0.45}})
    gap = next(c for c in candidates if c.id == "d")
    assert cut_explanation(gap, cutoffs) == "cut by gap: 0.450 < 0.50 × top 1.000 = 0.500"


def test_one_kept_unit_naming_the_query_identifier_is_sufficient() -> None:
    candidates, _ = _fuse({Lane.BM25: {"a": 1.0}}, roles={"a": Role.CONSTRAINT})
    kept = [c for c in candidates if c.kept]
    assert sufficiency(kept, Act.EXPLAIN)[0] is False
    assert sufficiency(kept, Act.EXPLAIN, ("shp-2",)) == (True, "1 kept and it names shp-2 exactly")


def test_one_kept_unit_naming_every_focus_word_is_sufficient() -> None:
    candidates, _ = _fuse({Lane.BM25: {"a": 1.0}}, roles={"a": Role.CONSTRAINT})
    kept = [c for c in candidates if c.kept]
    assert sufficiency(kept, Act.DEFINE, names_all=("vault", "door", "combination")) == (
        True,
        "1 kept and it names every word the question asks about (vault, door, combination)",
    )
