from __future__ import annotations

import dataclasses
import json

import pytest

from benchmarks import adversarial
from core.retrieval import thinkingdb
from core.retrieval.rules import Rule, RuleSet, load_rules
from core.retrieval.thinkingdb import Proof, ThinkingDB, budget, closure, facts
from core.units import KnowledgeUnit, Role

DEFAULTS = load_rules()
GOAL, SEED, PENALTY = 1.15, 1.10, 0.25


def uid(i: int) -> str:
    return f"t::chunk-000::unit-{i:03d}"


def fact(i: int, s: str, r: str, o: str, confidence: float = 1.0) -> KnowledgeUnit:
    return KnowledgeUnit(
        id=uid(i),
        source_id="t",
        chunk_id="t::chunk-000",
        role=Role.EXPLANATION,
        topic=f"{s} and {o}",
        claim=f"{s} {r.replace('_', ' ')} {o}.",
        subject=s,
        relation=r,
        object=o,
        confidence=confidence,
    )


def build(triples: list[tuple], ruleset: RuleSet = DEFAULTS, **limits: object) -> ThinkingDB:
    units = [fact(i, *t) for i, t in enumerate(triples)]
    if limits:
        ruleset = dataclasses.replace(ruleset, limits=ruleset.limits.model_copy(update=limits))
    return ThinkingDB.build(units, ruleset)


def proof_for(result: thinkingdb.TdbResult, text: str) -> Proof:
    [found] = [p for p in result.proofs if p.fact == text]
    return found


def path_score(confidence: float, steps: int, goal: bool = True, seed: bool = True) -> float:
    return confidence / (1 + PENALTY * steps) * (GOAL if goal else 1) * (SEED if seed else 1)


CHAIN = [("Atlas", "uses", "Beacon"), ("Beacon", "provides", "Cache", 0.8), ("Cache", "relevant_for", "Dashboard")]


def test_two_step_chain_returns_the_three_source_units_with_the_proof_tree() -> None:
    result = build(CHAIN).query("Explain why Atlas is relevant for Dashboard.")
    assert set(result.unit_scores) == {uid(0), uid(1), uid(2)}

    proof = proof_for(result, "Atlas relevant_for Dashboard")
    assert (proof.rule, proof.weight, proof.steps) == ("capability_to_relevance", 0.90, 2)
    capability, relevance = proof.premises
    assert (capability.fact, capability.rule, capability.steps) == (
        "Atlas has_capability Cache",
        "tool_to_capability",
        1,
    )
    assert [(p.fact, p.rule, p.units) for p in capability.premises] == [
        ("Atlas uses Beacon", None, (uid(0),)),
        ("Beacon provides Cache", None, (uid(1),)),
    ]
    assert (relevance.fact, relevance.rule, relevance.units) == ("Cache relevant_for Dashboard", None, (uid(2),))
    assert proof.units == (uid(0), uid(1), uid(2))

    confidence = 1.0 * 0.8 * 0.95 * 1.0 * 0.90
    assert proof.confidence == pytest.approx(confidence)
    assert proof.score == pytest.approx(path_score(confidence, 2))
    assert capability.score == pytest.approx(path_score(0.8 * 0.95, 1))


def test_units_take_the_score_of_the_best_derivation_they_are_part_of() -> None:
    result = build(CHAIN).query("Explain why Atlas is relevant for Dashboard.")
    assert [s.fact for s in result.seeds] == ["Atlas uses Beacon", "Cache relevant_for Dashboard"]
    assert all(s.steps == 0 and s.uses_seed for s in result.seeds)
    # Seed facts do not rank as bare 0-step proofs once something was derived, and only the
    # derivation that answers the question (Atlas … Dashboard) ranks units, in role order: the
    # conclusion's unit (the stated fact that completes it) first, then the steps in chain order.
    assert [p.fact for p in result.proofs] == ["Atlas relevant_for Dashboard"]
    goal = path_score(0.8 * 0.95 * 0.90, 2)
    assert result.unit_scores == pytest.approx({uid(2): goal, uid(0): goal * 0.98, uid(1): goal * 0.96})
    assert result.top_score == pytest.approx(goal)
    assert result.lane_scores() == pytest.approx({uid(2): 1.0, uid(0): 0.98, uid(1): 0.96})
    scores = [p.score for p in result.proofs]
    assert scores == sorted(scores, reverse=True)
    assert result.stop_reason == "fixpoint"


def test_without_an_answering_derivation_every_derivation_ranks_but_adds_only_its_last_step() -> None:
    result = build(CHAIN).query("What can Atlas do?")
    assert [p.fact for p in result.proofs] == [
        "Atlas has_capability Cache",
        "Atlas relevant_for Dashboard",
        "Beacon relevant_for Dashboard",
    ]
    # Only the unit of the last step, whose fact does not name Atlas (BM25 finds "Atlas uses
    # Beacon"), at half its pathScore; "Beacon relevant_for Dashboard" is not about the question.
    capability = path_score(0.8 * 0.95, 1)
    relevance = path_score(0.8 * 0.95 * 0.90, 2)
    assert result.unit_scores == pytest.approx({uid(1): capability / 2, uid(2): relevance / 2})
    assert max(result.lane_scores().values()) == pytest.approx(0.5)


def test_seed_facts_rank_as_zero_step_proofs_when_nothing_is_derived() -> None:
    db = build([("Atlas", "uses", "Beacon"), ("Cache", "mentions", "Dashboard")])
    result = db.query("What does Atlas use?")
    assert [(p.fact, p.steps) for p in result.proofs] == [("Atlas uses Beacon", 0)]
    # A bare seed naming one thing the question asks about adds nothing BM25 does not find ...
    assert result.unit_scores == {}
    # ... one connecting two of them answers it.
    assert db.query("Does Atlas use Beacon?").unit_scores == pytest.approx({uid(0): path_score(1.0, 0)})


def test_single_letter_names_match_only_as_written() -> None:
    db = build([("A", "uses", "B"), ("B", "provides", "C"), ("C", "relevant_for", "D")])
    result = db.query("Explain why A is relevant for D.")
    assert set(result.unit_scores) == {uid(0), uid(1), uid(2)}
    assert proof_for(result, "A relevant_for D").rule == "capability_to_relevance"
    # "a" the article is not the entity "A".
    assert db.query("find a tool").seeds == []


def test_rule_stats_show_firings_bindings_and_blocked_premises() -> None:
    stats = build(CHAIN).query("Explain why Atlas is relevant for Dashboard.").rule_stats
    tool = stats["tool_to_capability"]
    assert tool.fired == 1
    assert tool.bindings == [{"?x": "Atlas", "?y": "Beacon", "?z": "Cache"}]
    assert tool.derived == ["Atlas has_capability Cache"]
    assert stats["dependency_transitive"].fired == 0
    assert stats["dependency_transitive"].first_unmatched_premise == 0
    assert stats["tool_to_capability"].first_unmatched_premise is None


DEPENDENCY_CHAIN = [
    ("Xenon", "depends_on", "Yarrow"),
    ("Yarrow", "depends_on", "Zircon"),
    ("Zircon", "provides", "Copper"),
    ("Copper", "relevant_for", "Gateway"),
]


def test_dependency_chain_is_found_within_max_depth() -> None:
    result = build(DEPENDENCY_CHAIN).query("Why is Xenon relevant for Gateway?")
    proof = proof_for(result, "Xenon relevant_for Gateway")
    # Through Xenon's provided capability (0.92 · 0.90 · 0.90) rather than Zircon's relevance
    # (0.92 · 0.88 · 0.85): the more confident derivation is the one kept.
    assert (proof.rule, proof.premises[0].rule) == ("capability_to_relevance", "dependency_provides")
    assert set(proof.units) == {uid(0), uid(1), uid(2), uid(3)}
    assert result.neighbourhood_size == 4


@pytest.mark.parametrize("depth", [1, 2])
def test_dependency_chain_is_cut_by_a_lower_max_depth(depth: int) -> None:
    result = build(DEPENDENCY_CHAIN, max_depth=depth).query("Why is Xenon relevant for Gateway?")
    assert "Xenon relevant_for Gateway" not in [p.fact for p in result.proofs]
    assert result.stop_reason == f"budget: maxDepth={depth}"
    assert uid(2) not in result.unit_scores


def test_recursive_rule_on_a_10k_fact_cyclic_graph_stops_at_the_derived_budget() -> None:
    nodes, chords = 2000, (1, 7, 31, 101, 503)
    triples = [(f"svc{i:04d}", "depends_on", f"svc{(i + c) % nodes:04d}") for i in range(nodes) for c in chords]
    assert len(triples) == 10_000
    db = build(triples)
    result = db.query("What does svc0000 depend on?")
    assert result.stop_reason == "budget: maxDerivedFacts=64"
    assert result.derived_count == 64
    assert result.rule_stats["dependency_transitive"].fired >= 64
    assert len(result.proofs) == 32


def test_cycles_reach_a_fixpoint_with_self_loops() -> None:
    ring = [("Ant", "depends_on", "Bee"), ("Bee", "depends_on", "Cow"), ("Cow", "depends_on", "Ant")]
    result = build(ring, max_proofs=64).query("What does Ant depend on?")
    facts = {p.fact for p in result.proofs}
    assert {"Ant depends_on Ant", "Bee depends_on Bee", "Cow depends_on Cow", "Ant depends_on Cow"} <= facts
    assert result.stop_reason == "fixpoint"
    assert result.derived_count == 6


def test_symbols_match_case_insensitively_and_keep_their_first_spelling() -> None:
    db = build([("Orion", "uses", "Kafka"), ("KAFKA", "provides", "streaming"), ("orion_cluster", "about", "x")])
    result = db.query("what does orion use?")
    # A whole-name match ranks before the partial one on "orion cluster".
    assert [s.fact for s in result.seeds] == ["Orion uses Kafka", "orion_cluster about x"]
    assert proof_for(result, "Orion has_capability streaming").premises[1].fact == "Kafka provides streaming"
    assert [s.fact for s in db.query("Tell me about the Orion-Cluster").seeds][0] == "orion_cluster about x"


def test_multiword_phrase_matches_rank_before_partial_overlaps() -> None:
    db = build([("Orion", "about", "Vega"), ("Orion Cluster", "about", "Rigel")], max_seed_facts=1)
    assert [s.fact for s in db.query("Is the orion cluster healthy?").seeds] == ["Orion Cluster about Rigel"]


def test_preferred_terms_seed_like_the_query() -> None:
    db = build(CHAIN)
    assert db.query("Why is it relevant?").seeds == []
    assert [s.fact for s in db.query("Why is it relevant?", preferred_terms=["Atlas"]).seeds] == ["Atlas uses Beacon"]


def test_facts_below_min_confidence_are_ignored() -> None:
    weak = [("Atlas", "uses", "Beacon"), ("Beacon", "provides", "Cache", 0.1), ("Cache", "relevant_for", "Dashboard")]
    db = build(weak)
    result = db.query("Explain why Atlas is relevant for Dashboard.")
    assert uid(1) not in result.unit_scores
    assert "Atlas relevant_for Dashboard" not in [p.fact for p in result.proofs]
    assert db.explain_absence(uid(1), "Atlas") == "fact confidence 0.1 is below minConfidence 0.15"
    assert uid(1) in build(weak, min_confidence=0.05).query("Explain why Atlas is relevant for Dashboard.").unit_scores


def test_best_proof_keeps_the_most_confident_derivation() -> None:
    db = build(
        [
            ("Atlas", "uses", "Weak"),
            ("Weak", "provides", "Cache", 0.5),
            ("Atlas", "uses", "Strong"),
            ("Strong", "provides", "Cache", 0.9),
        ]
    )
    proof = proof_for(db.query("What can Atlas do?"), "Atlas has_capability Cache")
    assert proof.confidence == pytest.approx(0.9 * 0.95)
    assert proof.units == (uid(2), uid(3))


def test_a_derivable_fact_that_is_already_stated_is_not_new() -> None:
    db = build([*CHAIN[:2], ("Atlas", "has_capability", "Cache")])
    result = db.query("What can Atlas do?")
    assert result.rule_stats["tool_to_capability"].fired == 1
    assert result.derived_count == 0
    assert result.stop_reason == "fixpoint"
    stated = [p for p in result.proofs if p.fact == "Atlas has_capability Cache"]
    assert [(p.rule, p.units) for p in stated] == [(None, (uid(2),))]


def test_duplicate_facts_are_stated_by_the_most_confident_unit() -> None:
    db = build([("Atlas", "uses", "Beacon", 0.6), ("atlas", "uses", "beacon", 0.9)])
    assert set(db.query("Does Atlas use Beacon?").unit_scores) == {uid(1)}
    assert db.explain_absence(uid(0), "Atlas") == f"the same fact is stated with higher confidence by {uid(1)}"


def test_indexes_are_built_once_and_reused(monkeypatch: pytest.MonkeyPatch) -> None:
    db = build(CHAIN)
    indexes = db.indexes
    calls: list[object] = []
    original = facts.index_facts
    monkeypatch.setattr(facts, "index_facts", lambda d: calls.append(d) or original(d))
    first = db.query("Explain why Atlas is relevant for Dashboard.")
    second = db.query("Explain why Atlas is relevant for Dashboard.")
    assert calls == []
    assert db.indexes is indexes
    assert first.unit_scores == second.unit_scores
    assert [p.to_dict() for p in first.proofs] == [p.to_dict() for p in second.proofs]


def test_proof_to_dict_is_json_with_the_documented_keys() -> None:
    proof = proof_for(
        build(CHAIN).query("Explain why Atlas is relevant for Dashboard."), "Atlas relevant_for Dashboard"
    )
    data = proof.to_dict()
    assert json.loads(json.dumps(data)) == data

    def check(node: dict) -> None:
        assert set(node) == {"fact", "score", "confidence", "steps", "rule", "weight", "premises", "units"}
        for premise in node["premises"]:
            check(premise)

    check(data)
    assert data["fact"] == "Atlas relevant_for Dashboard"
    assert data["units"] == [uid(0), uid(1), uid(2)]
    assert data["premises"][0]["premises"][1] == {
        "fact": "Beacon provides Cache",
        "score": pytest.approx(0.8),
        "confidence": 0.8,
        "steps": 0,
        "rule": None,
        "weight": None,
        "premises": [],
        "units": [uid(1)],
    }


def test_max_proofs_caps_the_ranking_deterministically() -> None:
    triples = [("Hub", "uses", f"tool{i:02d}") for i in range(20)] + [
        (f"tool{i:02d}", "provides", f"cap{i:02d}") for i in range(20)
    ]
    db = build(triples, max_proofs=5)
    first, second = db.query("What does Hub use?"), db.query("What does Hub use?")
    assert len(first.proofs) == 5
    assert [p.fact for p in first.proofs] == [p.fact for p in second.proofs]
    assert all(first.best_proof_by_unit[u] in first.proofs for u in first.unit_scores)


def test_large_deltas_are_joined_in_full() -> None:
    # The driving fact sits far past the first chunk of the round-1 delta.
    triples = [("Hub", "uses", f"tool{i:03d}") for i in range(600)] + [("tool599", "provides", "Cache")]
    result = build(triples).query("What does Hub use?")
    assert result.neighbourhood_size == 601
    assert result.rule_stats["tool_to_capability"].derived == ["Hub has_capability Cache"]


def test_neighbourhood_and_join_caps_are_reported() -> None:
    triples = [("Hub", "uses", f"tool{i:02d}") for i in range(20)] + [
        (f"tool{i:02d}", "provides", "Cache") for i in range(20)
    ]
    assert build(triples, max_neighbourhood_facts=10).query("What does Hub use?").capped == ("maxNeighbourhoodFacts",)
    joined = build(triples, max_join_rows=3).query("What does Hub use?")
    assert joined.capped == ("maxJoinRows",)
    assert joined.rule_stats["tool_to_capability"].fired == 3


def test_three_premise_rule_with_constants() -> None:
    rule = Rule.model_validate(
        {
            "id": "secure_stack",
            "when": [
                {"s": "?x", "r": "uses", "o": "?y"},
                {"s": "?y", "r": "provides", "o": "?z"},
                {"s": "?z", "r": "relevant_for", "o": "Security"},
            ],
            "then": {"s": "?x", "r": "supports", "o": "security"},
            "weight": 0.5,
        }
    )
    db = build(CHAIN + [("Cache", "relevant_for", "security")], RuleSet(rules=(rule,)))
    proof = proof_for(db.query("Does Atlas help security?"), "Atlas supports security")
    assert proof.rule == "secure_stack"
    assert [p.fact for p in proof.premises] == [
        "Atlas uses Beacon",
        "Beacon provides Cache",
        "Cache relevant_for security",
    ]
    assert proof.confidence == pytest.approx(0.8 * 0.5)


def test_rule_max_depth_limits_the_rounds_a_rule_fires_in() -> None:
    rules = load_rules()
    shallow = tuple(
        r.model_copy(update={"max_depth": 1}) if r.id == "capability_to_relevance" else r for r in rules.rules
    )
    db = build(CHAIN, dataclasses.replace(rules, rules=shallow))
    facts = [p.fact for p in db.query("Explain why Atlas is relevant for Dashboard.").proofs]
    assert "Atlas has_capability Cache" in facts
    assert "Atlas relevant_for Dashboard" not in facts


class TestExplainAbsence:
    def test_unit_without_a_triple(self) -> None:
        plain = KnowledgeUnit(
            id="t::chunk-000::unit-099",
            source_id="t",
            chunk_id="t::chunk-000",
            role=Role.NARRATIVE,
            topic="x",
            claim="y",
        )
        db = ThinkingDB.build([plain, fact(0, *CHAIN[0])], DEFAULTS)
        assert db.explain_absence(plain.id, "anything") == "unit has no symbolic fact"
        assert db.explain_absence("nope", "anything") == "unit is not in this view"

    def test_no_seed(self) -> None:
        assert build(CHAIN).explain_absence(uid(0), "unrelated words") == "no seed matched the query"

    def test_not_reachable(self) -> None:
        db = build(DEPENDENCY_CHAIN, max_depth=1)
        assert db.explain_absence(uid(2), "Why is Xenon relevant for Gateway?") == (
            "fact not reachable within maxDepth 1 hops of the seeds"
        )

    def test_rule_premise_without_a_match(self) -> None:
        db = build([("Atlas", "depends_on", "Beacon"), ("Beacon", "uses", "Cable")])
        assert db.explain_absence(uid(1), "What does Atlas depend on?") == (
            "rule tool_to_capability would have fired but premise 2 (Cable provides ?z) had no match"
        )

    def test_scored_unit_is_not_absent(self) -> None:
        reason = build(CHAIN).explain_absence(uid(1), "Explain why Atlas is relevant for Dashboard.")
        assert reason.startswith("not absent: scored 0.")


class TestClosureBudgets:
    """Issue 14: symmetric + transitive + 3-premise rules at the highest limits the rules model
    accepts, over the issue's ~6,800 facts; each budget stops the closure and names itself."""

    @pytest.fixture(scope="class")
    def explosive(self) -> tuple[list[KnowledgeUnit], list[str], RuleSet]:
        units, queries = adversarial.adversarial_units(adversarial.DEFAULT_FACTS)
        return units, queries, adversarial.adversarial_rules()

    def query(self, explosive: tuple, stop: object = None, **limits: object) -> thinkingdb.TdbResult:
        units, queries, ruleset = explosive
        ruleset = dataclasses.replace(ruleset, limits=ruleset.limits.model_copy(update=limits))
        return ThinkingDB.build(units, ruleset).query(queries[0], stop=stop)

    def test_the_adversarial_rules_are_at_every_upper_bound(self, explosive: tuple) -> None:
        limits = explosive[2].limits
        assert (limits.max_depth, limits.max_derived_facts, limits.max_join_rows) == (32, 100_000, 1_000_000)
        assert len(explosive[0]) > 6_500

    def test_derived_facts_budget(self, explosive: tuple) -> None:
        result = self.query(explosive, max_derived_facts=3_000)
        assert result.stop_reason == "budget: maxDerivedFacts=3000"
        assert result.derived_count == 3_000
        assert result.proofs

    def test_memory_budget_stops_before_the_arrays_pass_it(self, explosive: tuple) -> None:
        result = self.query(explosive, max_closure_mb=2)
        assert result.stop_reason == "budget: maxClosureMb=2"
        assert result.derived_count < 2 * 2**20 // closure.TABLE_ROW_BYTES

    def test_rounds_budget(self) -> None:
        result = build(DEPENDENCY_CHAIN, max_depth=1).query("Why is Xenon relevant for Gateway?")
        assert result.stop_reason == "budget: maxDepth=1"

    def test_wall_time_budget(self, explosive: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
        clock = iter(range(0, 10**9, 1))  # one second per poll: the deadline passes on the second poll
        monkeypatch.setattr(budget.time, "monotonic", lambda: next(clock))
        result = self.query(explosive, max_closure_ms=1_500)
        assert result.stop_reason == "budget: maxClosureMs=1500"
        assert result.derived_count < 100_000

    def test_a_cancel_token_stops_the_closure(self, explosive: tuple) -> None:
        class Token:
            cancelled = False

        token, polls = Token(), []

        def hook() -> bool:
            polls.append(1)
            token.cancelled = len(polls) > 3
            return token.cancelled

        by_token = self.query(explosive, stop=token)  # never set: runs to its other budgets
        by_callable = self.query(explosive, stop=hook)
        assert by_token.stop_reason == "budget: maxDerivedFacts=100000"
        assert by_callable.stop_reason == "cancelled"
        assert by_callable.derived_count < by_token.derived_count
        token.cancelled = True
        assert self.query(explosive, stop=token).stop_reason == "cancelled"

    def test_a_stop_hook_must_be_a_token_or_a_callable(self) -> None:
        with pytest.raises(TypeError, match="cancelled"):
            build(CHAIN).query("Atlas", stop=42)


ISOLATION = [
    ("A", "depends_on", "B", 0.9),
    ("B", "depends_on", "C", 0.9),
    ("C", "provides", "isolation", 0.9),
    ("isolation", "relevant_for", "secure execution", 0.9),
]


def tree(proof: Proof) -> tuple:
    return (proof.fact, proof.rule, tuple(tree(p) for p in proof.premises))


def test_a_capability_of_a_dependency_of_a_dependency_is_proved_with_its_tree() -> None:
    """Issue 9 item 3: A → B → C → isolation → secure execution, each step a stated fact."""
    result = build(ISOLATION).query("Explain why A benefits from isolation for secure execution.")
    best = result.proofs[0]
    assert tree(best) == (
        "A relevant_for secure execution",
        "capability_to_relevance",
        (
            (
                "A has_capability isolation",
                "dependency_provides",
                (
                    (
                        "A depends_on C",
                        "dependency_transitive",
                        (("A depends_on B", None, ()), ("B depends_on C", None, ())),
                    ),
                    ("C provides isolation", None, ()),
                ),
            ),
            ("isolation relevant_for secure execution", None, ()),
        ),
    )
    assert best.units == (uid(0), uid(1), uid(2), uid(3))
    assert best.confidence == pytest.approx(0.9**4 * 0.92 * 0.90 * 0.90)


def test_chains_of_uses_feed_provided_capabilities() -> None:
    greenhouse = [
        ("Greenhouse", "uses", "Controller"),
        ("Controller", "uses", "Sensor"),
        ("Sensor", "provides", "humidity readings"),
        ("humidity readings", "relevant_for", "mould prevention"),
    ]
    best = build(greenhouse).query("Why does the greenhouse help with mould prevention?").proofs[0]
    assert best.fact == "Greenhouse relevant_for mould prevention"
    assert [p.fact for p in best.premises] == [
        "Greenhouse has_capability humidity readings",
        "humidity readings relevant_for mould prevention",
    ]
    assert best.premises[0].premises[0].rule == "uses_transitive"
    assert set(best.units) == {uid(0), uid(1), uid(2), uid(3)}


def test_the_proof_connecting_the_most_named_entities_wins() -> None:
    # A shorter, more confident way to the same conclusion that skips isolation.
    shortcut = [*ISOLATION, ("A", "depends_on", "Dam"), ("Dam", "relevant_for", "secure execution")]
    db = build(shortcut)
    named_three = db.query("Explain why A benefits from isolation for secure execution.").proofs[0]
    assert named_three.fact == "A relevant_for secure execution"
    assert "A has_capability isolation" in [p.fact for p in named_three.premises]
    named_two = db.query("Explain why A matters for secure execution.").proofs[0]
    assert named_two.fact == "A relevant_for secure execution"
    assert [p.fact for p in named_two.premises] == ["A depends_on Dam", "Dam relevant_for secure execution"]
    assert named_two.confidence > named_three.confidence
