from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from core.infra.config import Bm25Config
from core.retrieval.bm25.fields import FIELDS, field_tokens
from core.retrieval.bm25.index import Bm25Index
from core.text.tokenizer import tokenize
from core.units import ACT_PREFERRED_ROLES, Act, KnowledgeUnit, Role
from tests.support.kb_units import unit

CONFIG = Bm25Config()


KB = [
    unit(1, Role.DEFINITION, "Kafka replication factor", "The replication factor is the number of broker copies."),
    unit(2, Role.COMPARISON, "Kafka versus RabbitMQ", "Kafka keeps a log; RabbitMQ routes messages to queues."),
    unit(
        3,
        Role.PROCEDURE,
        "Raising the replication factor",
        "Run kafka-reassign-partitions with a plan that lists more replicas per partition.",
        condition="Only when the cluster has enough brokers.",
    ),
    unit(4, Role.DIAGNOSTIC, "Under-replicated partitions", "Under-replicated partitions mean a broker is lagging."),
    unit(5, Role.EXPLANATION, "Why replicas lag", "Replicas lag when the network or disk of a broker is slow."),
    unit(
        6,
        Role.EVALUATION,
        "Choosing a message broker",
        "Kafka suits high-throughput logs while RabbitMQ suits task queues.",
        utility_acts=(Act.RECOMMEND, Act.COMPARE),
        utility_note="Useful when teams weigh throughput against routing.",
    ),
    unit(
        7,
        Role.CONSTRAINT,
        "Minimum in-sync replicas",
        "Writes fail when fewer in-sync replicas than min.insync remain.",
    ),
    unit(8, Role.NARRATIVE, "The outage of 2021", "A slow disk made the leader fall behind and writes stalled."),
    unit(
        9, Role.DESCRIPTION, "Consumer groups", "A consumer group shares the partitions of a topic between consumers."
    ),
    unit(10, Role.DEFINITION, "Partition", "A partition is an ordered, append-only log of messages."),
    unit(11, Role.EXPLANATION, "Consumer lag", "Lag grows when consumers read slower than producers write."),
    unit(12, Role.DEFINITION, "Broker", "A broker is a Kafka server that stores partitions."),
]


def reference_scores(units, query: list[str], preferred: tuple[Role, ...], config: Bm25Config) -> dict[str, float]:
    """The DESIGN §6 formula written the slow, obvious way."""
    docs = [dict(zip(FIELDS, field_tokens(u), strict=True)) for u in units]
    n = len(units)
    avgdl = {}
    for f in FIELDS:
        present = [len(d[f]) for d in docs if d[f]]
        avgdl[f] = sum(present) / len(present) if present else 1.0
    df = Counter(t for d in docs for t in {t for toks in d.values() for t in toks})
    out = {}
    for u, doc in zip(units, docs, strict=True):
        total = 0.0
        for term in query:
            if term not in df:
                continue
            idf = math.log((n - df[term] + 0.5) / (df[term] + 0.5) + 1)
            for f in FIELDS:
                tf = doc[f].count(term)
                if tf:
                    norm = 1 - config.b + config.b * len(doc[f]) / avgdl[f]
                    total += config.field_weights[f] * idf * tf * (config.k1 + 1) / (tf + config.k1 * norm)
        out[u.id] = total * (config.role_boost if u.role in preferred else 1.0)
    return out


@pytest.fixture(scope="module")
def index() -> Bm25Index:
    return Bm25Index.build(KB, CONFIG)


QUERIES = [
    "What is the Kafka replication factor?",
    "kafka kafka kafka brokers",
    "replicas lag replicas lag slow disk",
    "zookeeper quorum",
    "partitions partition consumer group",
    "compare Kafka and RabbitMQ for task queues",
    "under-replicated",
    "implement procedure",
]


@pytest.mark.parametrize("text", QUERIES)
@pytest.mark.parametrize("act", [Act.DEFINE, Act.COMPARE, Act.IMPLEMENT, Act.EXPLAIN])
def test_scores_match_reference_formula(index: Bm25Index, text: str, act: Act) -> None:
    query, preferred = tokenize(text), ACT_PREFERRED_ROLES[act]
    expected = reference_scores(KB, query, preferred, CONFIG)
    got = index.scores(query, preferred)
    assert got.dtype == np.float64 and got.shape == (len(KB),)
    for uid, score in zip(index.unit_ids, got, strict=True):
        assert score == pytest.approx(expected[uid], rel=1e-12, abs=1e-15)


def test_repeated_query_terms_count_each_time(index: Bm25Index) -> None:
    once, twice = index.scores(["kafka"], ()), index.scores(["kafka", "kafka"], ())
    assert np.any(once > 0)
    np.testing.assert_allclose(twice, 2 * once)


def test_role_boost_multiplies_preferred_roles_only(index: Bm25Index) -> None:
    query = tokenize("kafka replication broker partition")
    plain = index.scores(query, ())
    boosted = index.scores(query, (Role.DEFINITION,))
    for i, u in enumerate(KB):
        factor = CONFIG.role_boost if u.role is Role.DEFINITION else 1.0
        assert boosted[i] == pytest.approx(plain[i] * factor)


def test_absent_terms_and_empty_query_score_zero(index: Bm25Index) -> None:
    assert not index.scores(["zookeep", "quorum"], (Role.DEFINITION,)).any()
    assert not index.scores([], (Role.DEFINITION,)).any()
    assert index.top_k([], (), 5) == []


def test_top_k_orders_by_score_then_id_and_drops_zeros(index: Bm25Index) -> None:
    query = tokenize("kafka partitions")
    scores = index.scores(query, ())
    expected = sorted(
        ((uid, s) for uid, s in zip(index.unit_ids, scores, strict=True) if s > 0), key=lambda p: (-p[1], p[0])
    )
    assert index.top_k(query, (), 100) == [(uid, float(s)) for uid, s in expected]
    assert index.top_k(query, (), 3) == expected[:3]


def test_ties_break_on_unit_id() -> None:
    # Same text under ids given out of order: every score ties, so id order must decide.
    ids = ["kb::chunk-001::unit-009", "kb::chunk-001::unit-002", "kb::chunk-001::unit-005", "kb::chunk-001::unit-001"]
    units = [
        KnowledgeUnit(id=i, source_id="kb", chunk_id="chunk-001", role=Role.DEFINITION, topic="Broker", claim="x")
        for i in ids
    ]
    index = Bm25Index.build(units, CONFIG)
    assert [uid for uid, _ in index.top_k(["broker"], (), 3)] == sorted(ids)[:3]


@pytest.mark.parametrize("text", QUERIES)
def test_explain_sums_to_the_score(index: Bm25Index, text: str) -> None:
    query, preferred = tokenize(text), ACT_PREFERRED_ROLES[Act.DEFINE]
    scores = index.scores(query, preferred)
    for i, uid in enumerate(index.unit_ids):
        why = index.explain(query, uid, preferred)
        assert why.raw == scores[i]
        # Folding fields at build time regroups the float sum, so equality is to rounding only.
        assert math.fsum(c.contribution for c in why.contributions) * why.role_boost == pytest.approx(
            why.raw, rel=1e-12, abs=0.0
        )
        assert (why.raw > 0) == bool(why.contributions)


@pytest.mark.parametrize("text", QUERIES)
def test_contributions_of_many_units_equal_each_units_explanation(index: Bm25Index, text: str) -> None:
    # A trace explains its top candidates in one call: in any order, with units matching no term.
    query, ids = tokenize(text) * 2, list(reversed(index.unit_ids))
    expected = [index.explain(query, uid, ()).contributions for uid in ids]
    assert index.contributions_of(query, ids) == expected
    assert index.contributions_of(query, []) == []


def test_explain_reports_term_field_details(index: Bm25Index) -> None:
    why = index.explain(["replic", "replic", "broker"], "kb::chunk-001::unit-003", ACT_PREFERRED_ROLES[Act.IMPLEMENT])
    assert why.role_boost == CONFIG.role_boost
    got = [(c.term, c.field, c.tf, c.df, c.dl, c.query_count, c.field_weight) for c in why.contributions]
    # "replic" is in units 1, 3 and 4 ("under-replicated" also yields its part); "broker" in six units.
    assert got == [("replic", "topic", 1, 3, 3, 2, 1.5), ("broker", "condition", 1, 6, 3, 1, 0.6)]
    replic = why.contributions[0]
    assert replic.idf == pytest.approx(math.log((12 - 3 + 0.5) / (3 + 0.5) + 1))
    topic_avgdl = sum(len(field_tokens(u)[0]) for u in KB) / len(KB)
    assert replic.avgdl == pytest.approx(topic_avgdl)
    norm = 1 - CONFIG.b + CONFIG.b * 3 / topic_avgdl
    assert replic.contribution == pytest.approx(2 * 1.5 * replic.idf * 2.2 / (1 + 1.2 * norm))


def test_matched_terms_explains_why_not(index: Bm25Index) -> None:
    query = tokenize("kafka consumer lag")
    assert index.matched_terms(query, "kb::chunk-001::unit-011") == ["consum", "lag"]
    assert index.matched_terms(query, "kb::chunk-001::unit-010") == []


def test_avgdl_ignores_units_without_the_field(index: Bm25Index) -> None:
    why = index.explain(tokenize("enough brokers"), "kb::chunk-001::unit-003", ())
    condition = [c for c in why.contributions if c.field == "condition"]
    # Only unit 3 has a condition, so its length is the average.
    assert condition and all(c.dl == c.avgdl for c in condition)


def test_empty_view_builds_and_answers() -> None:
    index = Bm25Index.build([], CONFIG)
    assert index.scores(["kafka"], ()).shape == (0,)
    assert index.top_k(["kafka"], (), 10) == []


def test_top_k_equals_a_full_sort_on_a_large_tie_heavy_kb() -> None:
    """Enough units for the sampled pre-filter to engage, and few distinct scores, so ties straddle k."""
    rng = np.random.default_rng(5)
    words = ["alpha", "bravo", "charli", "delta", "echo"]
    units = [
        KnowledgeUnit(
            id=f"kb::chunk-{i % 7:03d}::unit-{i:04d}",
            source_id="kb",
            chunk_id=f"chunk-{i % 7:03d}",
            role=list(Role)[i % 9] if i % 9 != 2 else Role.DEFINITION,
            topic=" ".join(rng.choice(words, size=2)),
            claim=" ".join(rng.choice(words, size=3)),
        )
        for i in rng.permutation(3000)
    ]
    index = Bm25Index.build(units, CONFIG)
    for query in (["alpha"], ["bravo", "delta"], ["echo", "echo", "charli"]):
        scores = index.scores(query, (Role.DEFINITION,))
        ranked = sorted(
            ((uid, float(s)) for uid, s in zip(index.unit_ids, scores, strict=True) if s > 0),
            key=lambda p: (-p[1], p[0]),
        )
        assert len({s for _, s in ranked}) < len(ranked) / 10  # heavily tied
        for k in (1, 10, 50, 5000):
            assert index.top_k(query, (Role.DEFINITION,), k) == ranked[:k]
