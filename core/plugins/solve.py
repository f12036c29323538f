"""gs-symbolic: answers assembled only from kept evidence text and ThinkingDB proof chains.

No word of an answer comes from this module except the connectives that join evidence
("because", "so ... by <rule>"), and every statement carries the id of the unit it came from.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from core.answer.answer_forms import Draft, Form, form_draft, form_of
from core.answer.derived_vs_stated import asks_relation, stated_lead
from core.answer.passages import paragraph_units
from core.answer.proof_chains import best_proof, chain_answer, names_both_ends, names_subject_only, proofs_of
from core.answer.proof_objects import object_lead, with_every_object
from core.answer.quote_check import checked
from core.answer.quoted_units import claims_answer, comparison_answer, names_a_side, procedure_answer
from core.answer.short_answer import SHORT_TYPES, FocusRules, short_draft
from core.answer.support import Rules
from core.kernel.contract import (
    INSUFFICIENT_PREFACE,
    Descriptor,
    GoalSolver,
    GsResult,
    KbResult,
    PlannerHints,
    PluginType,
    RunContext,
    Status,
)
from core.memory.followup import refers_back
from core.memory.position import Focus, focus_min_support, focus_of, focus_threshold
from core.question import Question
from core.question.answer_types import AnswerType, Expected
from core.question.intent_cues import QuestionCues, focus_coverage, unit_text
from core.retrieval.fusion import RetrievalOutcome
from core.text.tokenizer import tokenize
from core.units import ACT_PREFERRED_ROLES, Act, Intent, KnowledgeUnit, Role

if TYPE_CHECKING:
    pass

NO_EVIDENCE_ANSWER = "I found no evidence in the knowledge base for this question."
WEAK_ANSWER_PREFIX = f"{INSUFFICIENT_PREFACE} to answer fully; the closest units say: "
CANNOT_TELL_PREFIX = f"{INSUFFICIENT_PREFACE} to answer: "
# GsResult.reason starts with this when the answer is weak, so the engine can mark it weak.
WEAK_REASON = "weak evidence"
# Below this fused score even the best unit matched the question only faintly: BM25 is divided
# by max(1, top raw), so a lone lexical lane gives 0.5 only to a raw score of 0.5.
WEAK_TOP_SCORE = 0.5
_CHAIN_ACTS = frozenset({Act.EXPLAIN, Act.DIAGNOSE})
_CODE = re.compile(r"\d")

DESCRIPTOR = Descriptor(
    id="gs-symbolic",
    type=PluginType.GS,
    name="Symbolic goal solver",
    description="Quotes the best evidence units or the ThinkingDB proof chain, citing every unit id.",
    cost_class="cheap",
    planner_hints=PlannerHints(
        supported_acts=tuple(Act),
        topic_tags=("general",),
        preferred_depth="shallow",
        evidence_style=("symbolic", "cited"),
        expected_latency_ms=1,
    ),
)


class SymbolicGoalSolver(GoalSolver):
    descriptor = DESCRIPTOR

    def __init__(self, services: object = None):
        """Plugin factories pass the shared services; answers need only the evidence."""

    def solve(self, ctx: RunContext, intent: Intent, evidence: KbResult) -> GsResult:
        outcome = evidence.outcome
        units = kept_units(ctx, outcome)
        if outcome is None or not units:
            reason = "no kept evidence to answer from"
            return GsResult(status=Status.NO_CONTEXT, reason=reason, answer=NO_EVIDENCE_ANSWER)
        question = ctx.question(intent)
        cues = question.cues
        focus = conversation_focus(ctx, outcome)
        rests = focus is not None and focus.accepted
        if cues.focus_words and not rests and not focus_coverage(cues, map(unit_text, units)).covered:
            # Units sharing no word with the question matched on noise (a digit, a stem).
            reason = f"no kept unit mentions any of: {', '.join(cues.focus_words)}"
            return GsResult(status=Status.NO_CONTEXT, reason=reason, answer=NO_EVIDENCE_ANSWER)
        unmatched = unmatched_codes(cues, units)
        if unmatched:
            reason = f"no kept unit mentions the code(s) the question names: {', '.join(unmatched)}"
            return GsResult(status=Status.NO_CONTEXT, reason=reason, answer=NO_EVIDENCE_ANSWER)
        draft = compose(intent, question, Kept(units, outcome, paragraph_units(ctx.view, units), focus_rules(focus)))
        # The decision is said in every outcome's reason (the trace, replay, --json's path).
        noted = "" if focus is None else f"; {focus.note()}"
        method = f"{draft.method}{noted}"
        if draft.cannot_tell:
            return _weak(draft, CANNOT_TELL_PREFIX, f"cannot tell from the evidence: {draft.cannot_tell}{noted}")
        weakness = weakness_of(draft, cues, units, outcome, focus)
        if weakness:
            return _weak(draft, WEAK_ANSWER_PREFIX, f"{weakness}; {method}")
        return GsResult(
            status=Status.SUCCESS,
            reason=method,
            answer=draft.text,
            cited_ids=draft.cited,
            detail=draft.detail,
            lead=draft.lead,
        )


def _weak(draft: Draft, preface: str, why: str) -> GsResult:
    return GsResult(
        status=Status.SUCCESS,
        reason=f"{WEAK_REASON}: {why}",
        answer=preface + draft.text,
        cited_ids=draft.cited,
        weak=True,
        detail=draft.detail,
    )


def unmatched_codes(cues: QuestionCues, units: Sequence[KnowledgeUnit]) -> tuple[str, ...]:
    """The question's codes (words mixing letters and digits: "VX-4471", "B-214") when no kept unit
    mentions any of them. A code names one thing; evidence about other things that shares the
    question's remaining words ("what does … say") does not answer it, whatever its rank."""
    codes = [word for word in cues.focus_words if _CODE.search(word) and any(ch.isalpha() for ch in word)]
    if not codes:
        return ()
    seen = set(tokenize(" ".join(unit_text(u) for u in units)))
    return () if any(tokenize(code)[:1] and tokenize(code)[0] in seen for code in codes) else tuple(codes)


def kept_units(ctx: RunContext, outcome: RetrievalOutcome | None) -> list[KnowledgeUnit]:
    """Kept units in rank order; an id the view cannot resolve is not the caller's to see."""
    if outcome is None:
        return []
    return ctx.view.units_of(outcome.evidence_ids)


@dataclass(frozen=True)
class AnswerPlan:
    """What the answer must be, settled once per question from the intent's act and its Question:
    the form its wording asks for (`form_of`, which reads the act and the cues' output shape) and
    the answer type (`Question.expected_for`, which reads the act too). The strategies read only
    this plan, so the act, the output cue, the form and the answer type meet in one place."""

    act: Act
    question: Question
    form: Form
    expected: Expected

    @classmethod
    def of(cls, intent: Intent, question: Question) -> AnswerPlan:
        expected = question.expected_for(intent.act)
        return cls(intent.act, question, form_of(question.text, question.cues, intent.act, expected), expected)

    @property
    def chains(self) -> bool:
        """A proof chain may answer: the question asks why, how or yes/no about a relation, or
        asks for an entity ("Which services does Orion depend on?"; a chain names no date,
        place, person or number)."""
        return self.expected.type not in (AnswerType.PERSON, AnswerType.PLACE, AnswerType.DATE, AnswerType.NUMBER) and (
            self.explains or self.form is Form.ENTITY
        )

    @property
    def explains(self) -> bool:
        return self.act in _CHAIN_ACTS or self.form in (Form.EXPLANATION, Form.YES_NO)

    @property
    def typed_lead(self) -> bool:
        """A span of the asked type leads: a name or claims are asked for, not steps or a comparison."""
        return (
            self.form in (Form.ENTITY, Form.CLAIMS)
            and self.act not in (Act.IMPLEMENT, Act.COMPARE)
            and self.expected.type in SHORT_TYPES
        )


@dataclass(frozen=True)
class Kept:
    """The evidence a strategy answers from: the kept units in rank order, the retrieval outcome
    (ThinkingDB's proofs), and the rest of the kept units' paragraphs."""

    units: Sequence[KnowledgeUnit]
    outcome: RetrievalOutcome
    paragraphs: Sequence[KnowledgeUnit] = ()
    focus: FocusRules | None = None


def _by_proof(plan: AnswerPlan, kept: Kept) -> Draft | None:
    """Asked why or how, the chain itself (its conclusion restates the question); asked yes or no
    about both ends of a derived fact, "Yes" because of it; otherwise a lead a cited sentence
    states (derived_vs_stated.py), else the conclusion, or every object the proofs give the
    subject the question names."""
    question, form = plan.question.text, plan.form
    tdb = kept.outcome.lane_details.get("tdb")
    units = {u.id for u in kept.units}
    proofs = proofs_of(kept.outcome)
    if not plan.explains:
        # An entity asked for by the relation a rule derived: the same answer as "What does Orion
        # depend on?". Asked by another relation, a cited sentence's lead answers (typed lead).
        relations = {r for r in {p.relation for p in proofs} if asks_relation(question, r)}
        proofs = [p for p in proofs if p.relation in relations]
    kind = "" if plan.explains else plan.expected.head
    proof = best_proof(proofs, question, plan.question.cues, units, getattr(tdb, "seeds", ()), kind)
    if proof is None:
        return None
    if form is Form.YES_NO:
        return chain_answer(proof, lead="Yes") if names_both_ends(question, proof) else None
    if form is Form.EXPLANATION or plan.expected.type in (AnswerType.REASON, AnswerType.MANNER):
        return chain_answer(proof, reason_first=True)
    stated = stated_lead(plan.question, plan.expected, proof, kept.units, kept.paragraphs)
    if stated is not None:
        return stated
    if names_subject_only(question, proof):
        # Asked for the object: every object the proofs give the subject (Lumen and Vault).
        first, *more = with_every_object(proof, proofs_of(kept.outcome), units)
        return chain_answer(first, lead=object_lead(first, *more), more=more)
    return chain_answer(proof)


def _by_typed_lead(plan: AnswerPlan, kept: Kept) -> Draft | None:
    """A span of the asked type from a cited sentence, checked (core/answer/short_answer.py)."""
    short = short_draft(plan.question, plan.expected, kept.units, kept.paragraphs, kept.focus)
    return replace(short[0], detail=short[1]) if short is not None else None


def _by_form(plan: AnswerPlan, kept: Kept) -> Draft | None:
    """The form the wording asks for (answer_forms.py); a yes/no verdict and a comparison stand as
    they are, the others pass the support check or say they cannot tell."""
    drafted = form_draft(plan.form, plan.question, kept.units, kept.paragraphs)
    if drafted is None or plan.form in (Form.YES_NO, Form.COMPARISON):
        return drafted
    return checked(plan.question, plan.expected, drafted, [*kept.units, *kept.paragraphs])


def _by_sides(plan: AnswerPlan, kept: Kept) -> Draft | None:
    """Asked to compare, each side's units, when some kept unit names a side."""
    cues = plan.question.cues
    if not names_a_side(kept.units, cues):
        return None
    return comparison_answer(kept.units, cues)


def _by_steps(plan: AnswerPlan, kept: Kept) -> Draft:
    """Asked how to do something, the procedure's steps; without a procedure, the claims quoted."""
    lead = lead_unit(kept.units, plan.question.cues, (Role.PROCEDURE,))
    if lead.role is Role.PROCEDURE:
        return procedure_answer(lead, kept.units, plan.question.cues)
    return claims_answer(kept.units, plan.question, lead, plan.form is Form.CLAIMS)


def _by_quoting(plan: AnswerPlan, kept: Kept) -> Draft:
    """The evidence quoted, led by the unit of the role the act prefers, under the support check."""
    lead = lead_unit(kept.units, plan.question.cues, ACT_PREFERRED_ROLES[plan.act])
    return checked(
        plan.question,
        plan.expected,
        claims_answer(kept.units, plan.question, lead, plan.form is Form.CLAIMS),
        kept.units,
    )


@dataclass(frozen=True)
class Strategy:
    """One way to answer: `applies` to a plan, `draft` gives the answer (its `method` says how it
    was built) or None to let the next strategy try."""

    name: str
    applies: Callable[[AnswerPlan], bool]
    draft: Callable[[AnswerPlan, Kept], Draft | None]


# In order: the first strategy that applies and drafts an answer gives it; quoting always does.
STRATEGIES = (
    Strategy("proof chain", lambda plan: plan.chains, _by_proof),
    Strategy("typed lead", lambda plan: plan.typed_lead, _by_typed_lead),
    Strategy("answer form", lambda plan: plan.form is not Form.CLAIMS, _by_form),
    Strategy("comparison", lambda plan: plan.act is Act.COMPARE, _by_sides),
    Strategy("procedure", lambda plan: plan.act is Act.IMPLEMENT, _by_steps),
    Strategy("quoted evidence", lambda plan: True, _by_quoting),
)


def compose(intent: Intent, question: Question, kept: Kept) -> Draft:
    """The answer of the first strategy that applies to the question's plan and finds one."""
    plan = AnswerPlan.of(intent, question)
    # The last strategy always applies and always drafts, so one is found.
    return next(
        drafted
        for strategy in STRATEGIES
        if strategy.applies(plan) and (drafted := strategy.draft(plan, kept)) is not None
    )


def lead_unit(units: Sequence[KnowledgeUnit], cues: QuestionCues, roles: Sequence[Role]) -> KnowledgeUnit:
    """Among kept units that alone cover enough focus words: the one covering most, then of the
    earliest preferred role, then best-ranked; the top unit when none covers enough. Retrieval
    ranked by score; this keeps a unit about something else, or of the wrong kind, from leading."""
    candidates = []
    for rank, unit in enumerate(units):
        coverage = focus_coverage(cues, [unit_text(unit)])
        if coverage.enough and coverage.covered:
            role_rank = roles.index(unit.role) if unit.role in roles else len(roles)
            candidates.append((-len(coverage.covered), role_rank, rank, unit))
    return min(candidates, key=lambda c: c[:3])[3] if candidates else units[0]


def conversation_focus(ctx: RunContext, outcome: RetrievalOutcome) -> Focus | None:
    """The follow-up's decision on the kept units the conversation's position placed."""
    kept = [(candidate.id, candidate.position) for candidate in outcome.kept]
    if not any(prior > 0 for _, prior in kept):
        # No focus whatever the question says (`focus_of`); whether it refers back tags it.
        return None
    return focus_of(refers_back(ctx.request.question), kept, focus_threshold(), focus_min_support())


def focus_rules(focus: Focus | None) -> FocusRules | None:
    """How a lead in the accepted focus unit is checked: the learned least support in place of the
    general one (None: no focus, or none learned)."""
    if focus is None or not focus.accepted or focus.min_support is None:
        return None
    return FocusRules(focus.unit, Rules(threshold=focus.min_support))


def weakness_of(
    draft: Draft,
    cues: QuestionCues,
    units: Sequence[KnowledgeUnit],
    outcome: RetrievalOutcome,
    focus: Focus | None = None,
) -> str:
    """Why the evidence is weak, or "" when it is not: a faint top score or too few focus terms
    covered. A unit the accepted conversation focus vouches for counts its position prior, which
    is in the fused score's units, and citing it needs none of the question's words."""
    # The weighted fused score, whatever the ranking method: RRF scores by rank alone, so its top
    # unit scores 1.0 however faintly it matched.
    rests = focus is not None and focus.accepted
    top = max(candidate.fused + (candidate.position if rests else 0.0) for candidate in outcome.kept)
    if top < WEAK_TOP_SCORE:
        return f"top evidence score {top:.2f} < {WEAK_TOP_SCORE:.2f}"
    if rests and focus is not None and focus.unit in draft.cited:
        return ""  # the question's words are the conversation's: the typed lead's check stands
    cited = [unit_text(u) for u in units if u.id in draft.cited]
    coverage = focus_coverage(cues, [draft.text, *cited])
    return "" if coverage.enough else coverage.summary()
