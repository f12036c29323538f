"""sd-symbolic, gs-symbolic and val-grounded over tiny hand-built views and retrieval outcomes."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from core.cnl import parse_intents
from core.infra.config import FusionConfig, Lane, Profile
from core.kb.knowledge_base import KBView
from core.kernel.contract import GsResult, KbResult, Request, RunContext, Status
from core.plugins.seed import SymbolicSeedDetector
from core.plugins.solve import (
    CANNOT_TELL_PREFIX,
    NO_EVIDENCE_ANSWER,
    WEAK_ANSWER_PREFIX,
    WEAK_REASON,
    SymbolicGoalSolver,
)
from core.plugins.validate import GroundedValidator
from core.retrieval.fusion import RetrievalOutcome, fuse, sufficiency
from core.retrieval.rules import load_rules
from core.retrieval.thinkingdb import ThinkingDB
from core.units import Act, Caller, Intent, KnowledgeUnit, Relation, Role

PROFILE = Profile(
    lanes=(Lane.BM25, Lane.TDB), max_results=8, min_score=0.12, gap_threshold=0.25, min_acceptable_candidates=1
)


def uid(n: int) -> str:
    return f"kb::chunk-000::unit-{n:03d}"


def unit(n: int, text: str, role: Role = Role.EXPLANATION, topic: str | None = None, **triple: object) -> KnowledgeUnit:
    body = {"procedure": text} if role is Role.PROCEDURE else {"claim": text}
    return KnowledgeUnit(
        id=uid(n), source_id="kb", chunk_id="chunk-000", role=role, topic=topic or text[:30], **body, **triple
    )


def fact(n: int, subject: str, relation: str, obj: str) -> KnowledgeUnit:
    return unit(
        n,
        f"{subject} {relation.replace('_', ' ')} {obj}.",
        topic=f"{subject} and {obj}",
        subject=subject,
        relation=Relation(relation),
        object=obj,
    )


def context(units: list[KnowledgeUnit], question: str = "") -> RunContext:
    return RunContext(
        request=Request(question=question), view=KBView(units, ("test", Caller().key, ""), Caller()), services=None
    )


def retrieval(
    units: list[KnowledgeUnit],
    lanes: Mapping[Lane, Mapping[str, float]],
    act: Act,
    details: Mapping[str, object] | None = None,
) -> KbResult:
    """A RetrievalOutcome from the real fusion and cut-offs over lane scores already normalised."""
    candidates, cutoffs = fuse(
        lanes,
        roles={u.id: u.role for u in units},
        bm25_raw={},
        preferred_roles=(),
        role_boost=1.3,
        config=FusionConfig(),
        profile=PROFILE,
    )
    sufficient, reason = sufficiency([c for c in candidates if c.kept], act)
    outcome = RetrievalOutcome(
        plugin="kb-test",
        act=act,
        query_terms=(),
        lanes=tuple(lanes),
        candidates=candidates,
        cutoffs=cutoffs,
        sufficient=sufficient,
        reason=reason,
        lane_details=details or {},
    )
    return KbResult(status=Status.SUCCESS if sufficient else Status.INSUFFICIENT, reason=reason, outcome=outcome)


def intent(act: Act, target: str) -> Intent:
    return Intent(act=act, target=target, output="text")


# --- sd-symbolic -----------------------------------------------------------------------------------


def test_sd_writes_valid_cnl_that_round_trips() -> None:
    question = "What is Orion and also how do I install it?"
    result = SymbolicSeedDetector().detect(context([], question))
    assert result.status is Status.SUCCESS
    parsed, diagnostics = parse_intents(result.intent_cnl)
    assert diagnostics == []
    assert tuple(parsed) == result.intents
    assert [(i.act, i.target, i.output) for i in result.intents] == [
        (Act.DEFINE, "What is Orion?", "definition"),
        # The second sentence's "it" is the first's subject (issue 38: a question of two sentences).
        (Act.IMPLEMENT, "How do I install Orion?", "steps"),
    ]
    assert result.context_units == ()


def test_sd_turns_stated_facts_into_current_turn_units_and_intent_context() -> None:
    question = "Given that Orion uses Helix, why is Orion relevant for logging?"
    result = SymbolicSeedDetector().detect(context([], question))
    assert result.status is Status.SUCCESS
    [only] = result.intents
    assert (only.act, only.target) == (Act.EXPLAIN, "Why is Orion relevant for logging?")
    assert only.context == "Orion uses Helix."
    [stated] = result.context_units
    assert stated.current_turn
    assert stated.source_id == "current-turn" and stated.id.startswith("current-turn::")
    assert (stated.subject, stated.relation, stated.object) == ("Orion", Relation.USES, "Helix")


def test_sd_quotes_targets_with_special_characters() -> None:
    question = 'Why does the "retry" step\\path fail?'
    result = SymbolicSeedDetector().detect(context([], question))
    assert result.status is Status.SUCCESS
    assert result.intents[0].target == question


def test_sd_refuses_empty_question() -> None:
    result = SymbolicSeedDetector().detect(context([], "   "))
    assert (result.status, result.reason) == (Status.ERROR, "empty question")


# --- gs-symbolic: proof chains --------------------------------------------------------------------


@pytest.fixture
def chain_units() -> list[KnowledgeUnit]:
    return [
        fact(1, "A", "uses", "B"),
        fact(2, "B", "provides", "C"),
        fact(3, "C", "relevant_for", "D"),
        unit(4, "D is a goal many teams share.", role=Role.NARRATIVE),
    ]


def tdb_retrieval(units: list[KnowledgeUnit], question: str, act: Act = Act.EXPLAIN) -> KbResult:
    tdb = ThinkingDB.build(units, load_rules())
    result = tdb.query(question)
    return retrieval(units, {Lane.TDB: result.lane_scores()}, act, {"tdb": result})


def test_gs_explains_with_the_proof_chain_and_rule_names(chain_units: list[KnowledgeUnit]) -> None:
    question = "Explain why A is relevant for D."
    result = SymbolicGoalSolver().solve(
        context(chain_units), intent(Act.EXPLAIN, question), tdb_retrieval(chain_units, question)
    )
    assert result.status is Status.SUCCESS
    assert result.answer == (
        f"Because A uses B [{uid(1)}]; B provides C [{uid(2)}] "
        f"(so A has_capability C by tool_to_capability); C relevant_for D [{uid(3)}] "
        f"(so A relevant_for D by capability_to_relevance)."
    )
    assert result.cited_ids == (uid(1), uid(2), uid(3))
    assert "capability_to_relevance" in result.reason


def test_gs_diagnose_also_uses_chains_but_define_quotes_units(chain_units: list[KnowledgeUnit]) -> None:
    question = "Explain why A is relevant for D."
    evidence = tdb_retrieval(chain_units, question)
    diagnosed = SymbolicGoalSolver().solve(context(chain_units), intent(Act.DIAGNOSE, question), evidence)
    assert diagnosed.answer.startswith("Because A uses B") and "proof chain" in diagnosed.reason
    defined = SymbolicGoalSolver().solve(context(chain_units), intent(Act.DEFINE, question), evidence)
    assert defined.answer == f"C relevant for D [{uid(3)}]."


def test_gs_skips_proofs_resting_on_units_that_were_cut(chain_units: list[KnowledgeUnit]) -> None:
    question = "Explain why A is relevant for D."
    full = tdb_retrieval(chain_units, question)
    without_b = [u for u in chain_units if u.id != uid(2)]
    lanes = {Lane.TDB: {c.id: c.lanes[Lane.TDB] for c in full.outcome.kept if c.id != uid(2)}}
    evidence = retrieval(without_b, lanes, Act.EXPLAIN, full.outcome.lane_details)
    result = SymbolicGoalSolver().solve(context(chain_units), intent(Act.EXPLAIN, question), evidence)
    assert "proof chain" not in result.reason and "(so " not in result.answer
    assert uid(2) not in result.cited_ids


def test_gs_does_not_answer_with_a_chain_to_another_goal() -> None:
    # A proof reaches D, but the question asks about E, which a fact names: no chain answers it.
    units = [
        fact(1, "Atlas", "uses", "Beacon"),
        fact(2, "Beacon", "provides", "Cargo"),
        fact(3, "Cargo", "relevant_for", "Delta"),
        fact(5, "Ember", "relevant_for", "Fjord"),
    ]
    question = "Why is Atlas relevant for Ember?"
    result = SymbolicGoalSolver().solve(context(units), intent(Act.EXPLAIN, question), tdb_retrieval(units, question))
    assert "proof chain" not in result.reason and "(so " not in result.answer


def test_gs_explains_through_a_chain_that_passes_the_named_capability() -> None:
    """Issue 9 item 3: the question names A, isolation and secure execution; no conclusion names all
    three, so the chain whose tree passes through isolation answers, every step cited."""
    units = [
        fact(1, "A", "depends_on", "B"),
        fact(2, "B", "depends_on", "C"),
        fact(3, "C", "provides", "isolation"),
        fact(4, "isolation", "relevant_for", "secure execution"),
    ]
    question = "Explain why A benefits from isolation for secure execution."
    result = SymbolicGoalSolver().solve(context(units), intent(Act.EXPLAIN, question), tdb_retrieval(units, question))
    assert result.answer == (
        f"Because A depends_on B [{uid(1)}]; B depends_on C [{uid(2)}] "
        f"(so A depends_on C by dependency_transitive); C provides isolation [{uid(3)}] "
        f"(so A has_capability isolation by dependency_provides); isolation relevant_for secure execution "
        f"[{uid(4)}] (so A relevant_for secure execution by capability_to_relevance)."
    )
    assert result.cited_ids == (uid(1), uid(2), uid(3), uid(4))


# --- gs-symbolic: quoting units -------------------------------------------------------------------


@pytest.fixture
def doc_units() -> list[KnowledgeUnit]:
    return [
        unit(1, "Orion is a job scheduler for batch workloads.", role=Role.DEFINITION, topic="Orion"),
        unit(2, "Orion retries failed jobs three times.", topic="Orion retries"),
        unit(3, "Helix is a message queue.", role=Role.DEFINITION, topic="Helix"),
        unit(
            4,
            "1. Download the Orion package.\n2. Run the installer.\n3. Start the service.",
            role=Role.PROCEDURE,
            topic="Installing Orion",
        ),
        unit(5, "Lunch is served at noon.", role=Role.NARRATIVE, topic="Canteen"),
    ]


def bm25(units: list[KnowledgeUnit], scores: dict[int, float], act: Act) -> KbResult:
    return retrieval(units, {Lane.BM25: {uid(n): s for n, s in scores.items()}}, act)


def test_gs_define_leads_with_what_the_best_unit_says_it_is(doc_units: list[KnowledgeUnit]) -> None:
    evidence = bm25(doc_units, {1: 1.0, 2: 0.8, 5: 0.7}, Act.DEFINE)
    result = SymbolicGoalSolver().solve(context(doc_units), intent(Act.DEFINE, "What is Orion?"), evidence)
    assert result.status is Status.SUCCESS and not result.weak
    # The lead is what follows "Orion is"; "Orion retries failed jobs" says what it does, not what
    # it is, and the canteen unit mentions no focus term: neither is cited.
    assert (
        result.answer
        == f"a job scheduler for batch workloads, because: Orion is a job scheduler for batch workloads [{uid(1)}]."
    )
    assert result.cited_ids == (uid(1),)
    assert result.detail is not None and result.detail.lead == "a job scheduler for batch workloads"


def test_gs_implement_lists_the_procedure_steps(doc_units: list[KnowledgeUnit]) -> None:
    evidence = bm25(doc_units, {1: 1.0, 4: 0.9}, Act.IMPLEMENT)
    result = SymbolicGoalSolver().solve(context(doc_units), intent(Act.IMPLEMENT, "How do I install Orion?"), evidence)
    assert result.answer.startswith(
        f"Installing Orion: 1. Download the Orion package; 2. Run the installer; 3. Start the service [{uid(4)}]."
    )
    assert result.cited_ids[0] == uid(4)


def test_gs_compare_quotes_each_side(doc_units: list[KnowledgeUnit]) -> None:
    evidence = bm25(doc_units, {1: 1.0, 3: 0.9, 2: 0.6}, Act.COMPARE)
    result = SymbolicGoalSolver().solve(context(doc_units), intent(Act.COMPARE, "Compare Orion and Helix."), evidence)
    assert result.answer == (
        f"Orion: Orion is a job scheduler for batch workloads [{uid(1)}]; Helix: Helix is a message queue "
        f"[{uid(3)}].\nOrion: Orion retries failed jobs three times [{uid(2)}]."
    )


def test_gs_compare_says_when_a_side_has_no_evidence(doc_units: list[KnowledgeUnit]) -> None:
    evidence = bm25(doc_units, {1: 1.0}, Act.COMPARE)
    result = SymbolicGoalSolver().solve(context(doc_units), intent(Act.COMPARE, "Orion versus Kestrel"), evidence)
    assert result.answer.endswith("Kestrel: no kept evidence mentions it.")


def test_gs_lead_covers_most_focus_words_then_prefers_the_acts_roles() -> None:
    units = [
        unit(1, "Orionctl is part of Orion.", topic="Orion tools"),
        unit(2, "Orion is a job scheduler.", role=Role.DEFINITION, topic="Orion"),
        unit(3, "Upgrade Orion components in this order: Vault, then Atlas.", topic="Orion upgrades"),
    ]
    evidence = bm25(units, {1: 1.0, 2: 0.9, 3: 0.8}, Act.DEFINE)
    defined = SymbolicGoalSolver().solve(context(units), intent(Act.DEFINE, "What is Orion?"), evidence)
    # "Orionctl is part of Orion" ranks first but defines Orionctl.
    assert defined.answer.startswith(f"a job scheduler, because: Orion is a job scheduler [{uid(2)}].")
    question = "In what order should I upgrade Orion components?"
    ordered = SymbolicGoalSolver().solve(context(units), intent(Act.RECOMMEND, question), evidence)
    assert ordered.cited_ids == (uid(3),)


def test_gs_supporting_units_need_enough_focus_words_not_one() -> None:
    units = [
        unit(1, "Report a lost parcel claim from the orders page.", topic="Lost parcels"),
        unit(2, "Each segment file is encrypted.", topic="Encryption"),
    ]
    evidence = bm25(units, {1: 1.0, 2: 0.9}, Act.IMPLEMENT)
    question = "How do I file a lost parcel claim?"
    result = SymbolicGoalSolver().solve(context(units), intent(Act.IMPLEMENT, question), evidence)
    assert result.cited_ids == (uid(1),)


def test_gs_procedure_keeps_its_intro_and_condition() -> None:
    procedure = "Install a test system.\n  1. Check the host.\n     It needs 4 cores.\n  2. Run the installer."
    units = [
        KnowledgeUnit(
            id=uid(1),
            source_id="kb",
            chunk_id="chunk-000",
            role=Role.PROCEDURE,
            topic="Installing Orion",
            procedure=procedure,
            condition="For tests only.",
        )
    ]
    evidence = bm25(units, {1: 1.0}, Act.IMPLEMENT)
    result = SymbolicGoalSolver().solve(context(units), intent(Act.IMPLEMENT, "How do I install Orion?"), evidence)
    assert result.answer == (
        f"Install a test system: 1. Check the host. It needs 4 cores; 2. Run the installer "
        f"(condition: For tests only) [{uid(1)}]."
    )


@pytest.mark.parametrize(
    ("procedure", "expected"),
    [
        ("Prepare. 1. Download it. 2. Run it.", "Prepare: 1. Download it; 2. Run it"),
        ("First sign in. Then open your orders.", "Returning Orion: First sign in. Then open your orders"),
    ],
)
def test_gs_one_line_procedures(procedure: str, expected: str) -> None:
    units = [
        KnowledgeUnit(
            id=uid(1),
            source_id="kb",
            chunk_id="chunk-000",
            role=Role.PROCEDURE,
            topic="Returning Orion",
            procedure=procedure,
        )
    ]
    evidence = bm25(units, {1: 1.0}, Act.IMPLEMENT)
    result = SymbolicGoalSolver().solve(context(units), intent(Act.IMPLEMENT, "How do I return Orion?"), evidence)
    assert result.answer == f"{expected} [{uid(1)}]."


def test_gs_compare_side_named_by_a_shared_unit_is_not_reported_missing() -> None:
    units = [
        unit(
            1,
            "Canary shifts load slowly; blue-green switches at once.",
            role=Role.COMPARISON,
            topic="Rollout strategies",
        )
    ]
    evidence = bm25(units, {1: 1.0}, Act.COMPARE)
    result = SymbolicGoalSolver().solve(context(units), intent(Act.COMPARE, "Compare canary and blue-green"), evidence)
    assert result.answer == f"Canary shifts load slowly; blue-green switches at once [{uid(1)}]."


def test_gs_compare_without_any_side_in_evidence_quotes_the_best_unit(doc_units: list[KnowledgeUnit]) -> None:
    evidence = bm25(doc_units, {2: 1.0}, Act.COMPARE)
    question = "Compare Kestrel and Falcon for Orion retries"
    result = SymbolicGoalSolver().solve(context(doc_units), intent(Act.COMPARE, question), evidence)
    assert "no kept evidence" not in result.answer
    assert result.cited_ids == (uid(2),)


def test_gs_units_sharing_no_word_with_the_question_are_no_context(doc_units: list[KnowledgeUnit]) -> None:
    evidence = bm25(doc_units, {4: 1.0}, Act.DEFINE)
    result = SymbolicGoalSolver().solve(context(doc_units), intent(Act.DEFINE, "What is VIP-RPL-1?"), evidence)
    assert (result.status, result.answer) == (Status.NO_CONTEXT, NO_EVIDENCE_ANSWER)
    assert result.reason == "no kept unit mentions any of: vip-rpl-1"


def test_gs_no_kept_evidence_is_no_context(doc_units: list[KnowledgeUnit]) -> None:
    evidence = bm25(doc_units, {}, Act.DEFINE)
    result = SymbolicGoalSolver().solve(context(doc_units), intent(Act.DEFINE, "What is Orion?"), evidence)
    assert (result.status, result.answer, result.cited_ids) == (Status.NO_CONTEXT, NO_EVIDENCE_ANSWER, ())
    assert result.reason


def test_gs_ignores_kept_units_the_view_cannot_see(doc_units: list[KnowledgeUnit]) -> None:
    evidence = bm25(doc_units, {1: 1.0}, Act.DEFINE)
    result = SymbolicGoalSolver().solve(context(doc_units[1:]), intent(Act.DEFINE, "What is Orion?"), evidence)
    assert result.status is Status.NO_CONTEXT


def test_gs_weak_when_top_score_is_faint(doc_units: list[KnowledgeUnit]) -> None:
    evidence = bm25(doc_units, {1: 0.3}, Act.DEFINE)
    result = SymbolicGoalSolver().solve(context(doc_units), intent(Act.DEFINE, "What is Orion?"), evidence)
    assert result.status is Status.SUCCESS
    assert result.answer.startswith(WEAK_ANSWER_PREFIX + "a job scheduler for batch workloads, because: Orion is")
    assert result.reason.startswith(f"{WEAK_REASON}: top evidence score 0.30 < 0.50")


def test_gs_weak_when_focus_terms_are_mostly_uncovered(doc_units: list[KnowledgeUnit]) -> None:
    evidence = bm25(doc_units, {1: 1.0}, Act.DEFINE)
    question = "What is the Orion retention quota for archived telemetry?"
    result = SymbolicGoalSolver().solve(context(doc_units), intent(Act.DEFINE, question), evidence)
    # "quota" names the kind of answer asked for; the other three the sentence must say.
    assert result.weak and result.answer.startswith(CANNOT_TELL_PREFIX + "cannot tell from the evidence")
    assert "the sentence does not say: retention, archived, telemetry" in result.reason


# --- val-grounded ---------------------------------------------------------------------------------


def answer(text: str, *cited: str) -> GsResult:
    return GsResult(status=Status.SUCCESS, answer=text, cited_ids=cited)


@pytest.fixture
def kept(doc_units: list[KnowledgeUnit]) -> KbResult:
    return bm25(doc_units, {1: 1.0, 2: 0.8}, Act.DEFINE)


def validate(doc_units: list[KnowledgeUnit], kept: KbResult, question: str, given: GsResult):
    return GroundedValidator().validate(context(doc_units), intent(Act.DEFINE, question), kept, given)


def test_val_accepts_cited_answer_covering_focus_terms(doc_units: list[KnowledgeUnit], kept: KbResult) -> None:
    verdict = validate(doc_units, kept, "What is Orion?", answer(f"Orion is a job scheduler [{uid(1)}]."))
    assert verdict.status is Status.ACCEPTED
    assert verdict.reason == "cites 1 evidence unit(s); 1 of 1 focus terms covered"


def test_val_accepts_gs_symbolic_chain_answer(chain_units: list[KnowledgeUnit]) -> None:
    question = "Explain why A is relevant for D."
    evidence = tdb_retrieval(chain_units, question)
    given = SymbolicGoalSolver().solve(context(chain_units), intent(Act.EXPLAIN, question), evidence)
    verdict = GroundedValidator().validate(context(chain_units), intent(Act.EXPLAIN, question), evidence, given)
    assert verdict.status is Status.ACCEPTED


def test_val_accepts_a_derived_lead_by_its_proof_but_not_the_same_lead_without_it(chain_units) -> None:
    """ "What does A lead to?" asks for a thing: the chain's conclusion "A relevant_for D" is said by
    no one sentence, so the support check alone rejected it (sample q16 "What does clock skew lead
    to?" ended weak); the proof, resting only on cited units, supports it. The same text without
    the proof among the evidence is still checked, and rejected."""
    question = "What does A lead to, relevant for D?"
    evidence = tdb_retrieval(chain_units, question)
    given = SymbolicGoalSolver().solve(context(chain_units), intent(Act.EXPLAIN, question), evidence)
    assert given.answer.startswith("A relevant_for D, because:")
    verdict = GroundedValidator().validate(context(chain_units), intent(Act.EXPLAIN, question), evidence, given)
    assert verdict.status is Status.ACCEPTED
    lanes = {Lane.TDB: {c.id: c.lanes[Lane.TDB] for c in evidence.outcome.kept}}
    unproven = retrieval(chain_units, lanes, Act.EXPLAIN)
    verdict = GroundedValidator().validate(context(chain_units), intent(Act.EXPLAIN, question), unproven, given)
    assert verdict.status is Status.REJECTED and "support check" in verdict.reason


def test_asked_what_the_subject_relates_to_the_lead_is_every_object_the_chain_gives_it() -> None:
    """ "What does Atlas depend on?": the chain says Atlas depends on Lumen and, derived, on Vault;
    the lead names both (it was "Atlas depends_on Vault", which restates half the question), and
    val-grounded accepts it by the proof."""
    units = [fact(1, "Atlas", "depends_on", "Lumen"), fact(2, "Lumen", "depends_on", "Vault")]
    question = "What does Atlas depend on?"
    found = ThinkingDB.build(units, load_rules()).query(question)
    # Both leaves kept, as kb-thinkingdb keeps a proof's leaves (the seed fact has no lane score).
    evidence = retrieval(units, {Lane.TDB: {uid(1): 1.0, uid(2): 0.5}}, Act.EXPLAIN, {"tdb": found})
    given = SymbolicGoalSolver().solve(context(units), intent(Act.EXPLAIN, question), evidence)
    assert given.answer == (
        f"Lumen and Vault, because: Atlas depends_on Lumen [{uid(1)}]; Lumen depends_on Vault "
        f"[{uid(2)}] (so Atlas depends_on Vault by dependency_transitive)."
    )
    verdict = GroundedValidator().validate(context(units), intent(Act.EXPLAIN, question), evidence, given)
    assert verdict.status is Status.ACCEPTED


def test_val_rejects_answer_without_citations(doc_units: list[KnowledgeUnit], kept: KbResult) -> None:
    verdict = validate(doc_units, kept, "What is Orion?", answer("Orion is a job scheduler."))
    assert (verdict.status, verdict.reason) == (Status.REJECTED, "the answer cites no evidence")


def test_val_rejects_citations_outside_the_evidence(doc_units: list[KnowledgeUnit], kept: KbResult) -> None:
    text = f"Orion is a scheduler [{uid(1)}] next to a queue [{uid(3)}, made-up]."
    verdict = validate(doc_units, kept, "What is Orion?", answer(text))
    assert verdict.status is Status.REJECTED
    assert verdict.reason == f"cites units not in the evidence: {uid(3)}, made-up"


def test_val_checks_declared_citations_too(doc_units: list[KnowledgeUnit], kept: KbResult) -> None:
    verdict = validate(doc_units, kept, "What is Orion?", answer(f"Orion schedules [{uid(1)}].", uid(5)))
    assert (verdict.status, verdict.reason) == (Status.REJECTED, f"cites units not in the evidence: {uid(5)}")


def test_val_ignores_brackets_quoted_from_a_unit() -> None:
    units = [unit(1, "Orion accepts flags [verbose] and [quiet].", topic="Orion flags")]
    evidence = bm25(units, {1: 1.0}, Act.DEFINE)
    text = f"Orion accepts flags [verbose] and [quiet] [{uid(1)}]."
    verdict = GroundedValidator().validate(
        context(units), intent(Act.DEFINE, "Which Orion flags exist?"), evidence, answer(text)
    )
    assert verdict.status is Status.ACCEPTED


def test_val_rejects_answer_leaving_focus_terms_uncovered(doc_units: list[KnowledgeUnit], kept: KbResult) -> None:
    question = "What is the Orion retention quota for archived telemetry?"
    verdict = validate(doc_units, kept, question, answer(f"Orion is a job scheduler [{uid(1)}]."))
    assert verdict.status is Status.REJECTED
    assert verdict.reason == (
        "focus terms not covered: retention, quota, archived, telemetry "
        "(1 of 5 focus terms covered; missing: retention, quota, archived, telemetry)"
    )


def test_val_counts_terms_found_only_in_cited_units(doc_units: list[KnowledgeUnit], kept: KbResult) -> None:
    # "retries" and "failed" are not in the answer text, but the cited unit says them.
    verdict = validate(doc_units, kept, "How often are failed Orion jobs retried?", answer(f"Three times [{uid(2)}]."))
    assert verdict.status is Status.ACCEPTED


def test_val_does_not_judge_no_context_answers(doc_units: list[KnowledgeUnit], kept: KbResult) -> None:
    given = GsResult(status=Status.NO_CONTEXT, answer=NO_EVIDENCE_ANSWER, reason="no kept evidence")
    verdict = validate(doc_units, kept, "What is Orion?", given)
    assert (verdict.status, verdict.reason) == (Status.UNSUPPORTED, "nothing to validate: no-context answer")


# --- kb-thinkingdb: the answering unit first ---------------------------------------------------


def _thinkingdb_ranking(units: list[KnowledgeUnit], question: str) -> list[str]:
    from core.kb.knowledge_base import KnowledgeBase
    from core.kernel.session import Session

    session = Session.from_kb(KnowledgeBase.from_units(units))
    events = list(session.run(Request(question=question, pins={"kb": "kb-thinkingdb"})))
    [scored] = [e for e in events if getattr(e, "kind", "") == "retrieval_scored"]
    return [c.id for c in sorted(scored.candidates, key=lambda c: c.rank)]


APIARY = [
    unit(
        0, "Smoker: a can that burns fuel to calm bees before a hive is opened.", role=Role.DEFINITION, topic="Smoker"
    ),
    fact(1, "Smoker", "uses", "pine needles"),
    fact(2, "pine needles", "provides", "cool smoke"),
    fact(3, "cool smoke", "relevant_for", "hive inspection"),
    fact(4, "Veil", "provides", "face protection"),
]


def test_kb_thinkingdb_ranks_the_plain_answer_unit_first_when_no_proof_answers() -> None:
    # "Smoker has_capability cool smoke" is derived, but it connects nothing else the question names.
    ranking = _thinkingdb_ranking(APIARY, "What is a smoker?")
    assert ranking[0] == uid(0)
    assert uid(2) in ranking  # the derivation still adds the step it derived from


def test_kb_thinkingdb_ranks_the_conclusions_unit_first_then_the_chain() -> None:
    ranking = _thinkingdb_ranking(APIARY, "Why is the smoker relevant for hive inspection?")
    assert ranking[:3] == [uid(3), uid(1), uid(2)]
