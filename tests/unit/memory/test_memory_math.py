"""Seed 001's memory math: the hybrid score, recency half-lives, token packing and compaction buckets."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from core.infra.config import MemoryConfig
from core.memory.compaction import bucket_of, buckets, compact, cosines
from core.memory.packing import chars_per_token, estimate_tokens, pack
from core.memory.records import MemoryRecord
from core.memory.scoring import half_life, recency, score_records
from core.retrieval.hdc.vectors import DIMENSIONS, WORDS, bundle, hv
from tests.support.fuzz_settings import bounded

CONFIG = MemoryConfig()


def record(
    i: int, scope: str = "session", kind: str = "turn", ts: float = 0.0, confidence: float = 1.0
) -> MemoryRecord:
    return MemoryRecord(
        id=f"r{i:04d}",
        scope=scope,
        kind=kind,
        caller="c",
        ts=ts,
        turn=i,
        question=f"question {i}",
        confidence=confidence,
    )


def test_half_lives_are_the_seeds():
    hours = {scope: half_life(CONFIG.decay.of(scope)) / 3600 for scope in ("session", "user", "global")}
    assert round(hours["session"], 1) == 1.9
    assert round(hours["user"]) == 19
    assert round(hours["global"] / 24) == 4
    for scope in ("session", "user", "global"):
        assert math.isclose(recency(half_life(CONFIG.decay.of(scope)), CONFIG.decay.of(scope)), 0.5)


def test_worked_example_in_docs():
    # docs/scoring.md, "Memory": a session turn one hour old with sim 0.6, and a summary of confidence 0.8.
    turn = record(1, ts=0.0)
    summary = record(2, kind="summary", ts=0.0, confidence=0.8)
    note = record(3, scope="user", kind="note", ts=0.0)
    scored = {s.record.id: s for s in score_records([turn, summary, note], np.array([0.6, 0.6, 0.6]), 3600.0, CONFIG)}
    r = math.exp(-1e-4 * 3600)
    assert math.isclose(scored["r0001"].recency, r)
    assert math.isclose(scored["r0001"].score, 0.7 * 0.6 + 0.2 * r + 0.1 * 1.0)
    assert round(scored["r0001"].score, 4) == 0.6595
    assert math.isclose(scored["r0002"].quality, 1 - 0.5 * 0.2)
    assert round(scored["r0002"].score, 4) == 0.5936
    assert round(scored["r0003"].score, 4) == 0.6729


@bounded(60)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["session", "user", "global"]),
            st.sampled_from(["turn", "summary"]),
            st.floats(0, 1e6),
            st.floats(0, 1),
            st.floats(0, 1),
        ),
        min_size=1,
        max_size=30,
    ),
    st.floats(0, 2e6),
)
def test_scores_match_the_formula_for_random_records(rows, now):
    records = [
        record(i, scope, kind if scope == "session" else "turn", ts, conf)
        for i, (scope, kind, ts, conf, _) in enumerate(rows)
    ]
    sims = np.array([sim for *_, sim in rows])
    scored = score_records(records, sims, now, CONFIG)
    assert [s.score for s in scored] == sorted((s.score for s in scored), reverse=True)
    for s in scored:
        i = int(s.record.id[1:])
        lam = CONFIG.decay.of(s.record.scope)
        q = 1 - 0.5 * (1 - s.record.confidence) if s.record.kind == "summary" else 1.0
        expected = (
            0.7 * sims[i]
            + 0.2 * math.exp(-lam * max(0.0, now - s.record.ts))
            + 0.1 * CONFIG.scope_weight.of(s.record.scope)
        ) * q
        assert math.isclose(s.score, expected, rel_tol=1e-9, abs_tol=1e-12)


def test_weights_must_sum_to_one_and_stay_in_range():
    import pytest
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="must be 1"):
        MemoryConfig(alpha=0.5)
    with pytest.raises(ValidationError):
        MemoryConfig.model_validate({"decay": {"session": 2, "user": 1e-5, "global": 2e-6}})


def test_script_aware_token_estimate():
    assert chars_per_token("hello world") == 4.0
    assert estimate_tokens("hello world") == math.ceil(11 / 4.0)
    assert chars_per_token("привет мир") == 2.5
    assert chars_per_token("שלום עולם") == 2.5
    assert chars_per_token("你好世界") == 1.6
    assert estimate_tokens("你好世界") == math.ceil(4 / 1.6)
    assert estimate_tokens("") == 0


@bounded(80)
@given(st.lists(st.integers(0, 50), max_size=40), st.integers(0, 400))
def test_packing_keeps_the_longest_ranked_prefix_within_budget(costs, budget):
    packed = pack(list(range(len(costs))), budget, lambda i: costs[i])
    m = len(packed.kept)
    assert packed.kept == tuple(range(m)) and packed.left_out == tuple(range(m, len(costs)))
    assert sum(costs[:m]) <= budget and packed.cost == sum(costs[:m])
    assert m == len(costs) or sum(costs[: m + 1]) > budget


@bounded(80)
@given(st.integers(1, 300), st.integers(1, 50))
def test_buckets_are_contiguous_chronological_and_even(n, k):
    spans = buckets(n, k)
    assert len(spans) == math.ceil(n / k)
    assert [i for span in spans for i in span] == list(range(n))
    sizes = [len(span) for span in spans]
    assert max(sizes) - min(sizes) <= 1
    for j, span in enumerate(spans):
        assert all(bucket_of(i, n, k) == j for i in span)


def test_compaction_summarises_each_bucket_with_mean_cosine_confidence():
    vectors = {}
    base = hv("t", "base")
    turns = []
    for i in range(10):
        turns.append(record(i, ts=float(10 - i)))  # given out of order: compaction sorts by (ts, id)
        noise = hv("t", f"n{i}") & hv("t", f"m{i}") & hv("t", f"o{i}")  # ~1/8 of bits flipped
        vectors[turns[-1].id] = base ^ noise
    summaries = compact(turns, 4, lambda r: vectors[r.id])
    ordered = sorted(turns, key=lambda r: (r.ts, r.id))
    assert [len(s.source_ids) for s in summaries] == [4, 3, 3]
    assert [s.source_ids for s in summaries] == [
        tuple(r.id for r in ordered[a:b]) for a, b in ((0, 4), (4, 7), (7, 10))
    ]
    first = summaries[0]
    group = np.vstack([vectors[i] for i in first.source_ids])
    cos = np.maximum(cosines(group, bundle(group)), 0)
    chosen = cos[cos >= cos.mean()]
    assert math.isclose(first.confidence, float(chosen.mean()))
    assert 0.5 < first.confidence < 1 and math.isclose(first.decay_rate, 1 - first.confidence)
    assert all(s.kind == "summary" for s in summaries)


def test_cosine_of_bit_vectors():
    a = hv("t", "a")
    assert cosines(a[None, :], a)[0] == 1.0
    assert cosines((~a)[None, :], a)[0] == -1.0
    assert abs(cosines(hv("t", "b")[None, :], a)[0]) < 0.1
    assert a.shape == (WORDS,) and DIMENSIONS == 4096
