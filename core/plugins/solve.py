"""gs-symbolic: answers assembled only from kept evidence text and ThinkingDB proof chains.

No word of an answer comes from this module except the connectives that join evidence
("because", "so ... by <rule>"), and every statement carries the id of the unit it came from.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from core.answer.answer_forms import Draft, Form, form_draft, form_of, quoted_text
from core.answer.derived_vs_stated import asks_relation, stated_lead
from core.answer.passages import paragraph_units
from core.answer.proof_objects import object_lead, with_every_object
from core.answer.short_answer import SHORT_TYPES, FocusRules, checked, short_draft
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
from core.text.tokenizer import stem, tokenize
from core.units import ACT_PREFERRED_ROLES, Act, Intent, KnowledgeUnit, Role

if TYPE_CHECKING:
    from core.retrieval.thinkingdb import Proof

NO_EVIDENCE_ANSWER = "I found no evidence in the knowledge base for this question."
WEAK_ANSWER_PREFIX = f"{INSUFFICIENT_PREFACE} to answer fully; the closest units say: "
CANNOT_TELL_PREFIX = f"{INSUFFICIENT_PREFACE} to answer: "
# GsResult.reason starts with this when the answer is weak, so the engine can mark it weak.
WEAK_REASON = "weak evidence"
# Below this fused score even the best unit matched the question only faintly: BM25 is divided
# by max(1, top raw), so a lone lexical lane gives 0.5 only to a raw score of 0.5.
WEAK_TOP_SCORE = 0.5
MAX_SUPPORTING = 2
_CHAIN_ACTS = frozenset({Act.EXPLAIN, Act.DIAGNOSE})
_EDGE = ".,;:!?()[]{}\"'`"
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
        return chain_answer(proof, lead="Yes") if _names_both_ends(question, proof) else None
    if form is Form.EXPLANATION or plan.expected.type in (AnswerType.REASON, AnswerType.MANNER):
        return chain_answer(proof, reason_first=True)
    stated = stated_lead(plan.question, plan.expected, proof, kept.units, kept.paragraphs)
    if stated is not None:
        return stated
    asked = _stems(question)
    if _contains(asked, _stems(proof.subject)) and not _contains(asked, _stems(proof.object)):
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
    if not any(_mentions(u, tokenize(side)) for u in kept.units for side in cues.compared):
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


# --- proof chains -------------------------------------------------------------------------------


def proofs_of(outcome: RetrievalOutcome) -> list[Proof]:
    """ThinkingDB proofs, when the kb plugin ran that lane."""
    return list(getattr(outcome.lane_details.get("tdb"), "proofs", ()))


def best_proof(
    proofs: Sequence[Proof],
    question: str,
    cues: QuestionCues,
    evidence: set[str],
    seeds: Sequence[Proof] = (),
    kind: str = "",
) -> Proof | None:
    """The derived proof about what the question names.

    A proof qualifies when it rests only on kept units (the answer may cite nothing else) and its
    subject and object mention every focus term that names a symbol of the found facts (seeds
    included, since ThinkingDB ranks by derivations and a seed may take part in none): asked
    about a goal, a chain ending at another goal is no answer; only when no conclusion names
    them all does a proof whose tree names them qualify. Among those: most of its subject
    and object written in the question (matched as written, since a name such as "A" is a
    stopword that focus terms drop), then most focus words in its fact, then the best pathScore.
    """
    asked = _stems(question)
    # The kind asked for ("which services") is what the answer is, not a symbol it must name.
    entities = (set(cues.focus_terms) - set(tokenize(kind))) & _symbol_terms([*proofs, *seeds])
    best, best_key = None, (False, 0, 0, 0.0)
    for proof in proofs:
        if proof.rule is None or not set(proof.leaf_units()) <= evidence:
            continue
        # Entities named by the conclusion first; failing that, a chain that passes through the
        # rest of them on its way ("A benefits from isolation for secure execution": A → … →
        # isolation → secure execution).
        in_conclusion = entities <= set(tokenize(f"{proof.subject} {proof.object}"))
        if not in_conclusion and not entities <= _symbol_terms([proof]):
            continue
        named = sum(_contains(asked, _stems(name)) for name in (proof.subject, proof.object))
        touched = len(focus_coverage(cues, [proof.fact]).covered)
        key = (in_conclusion, named, touched, proof.score)
        if (named or touched) and key > best_key:
            best, best_key = proof, key
    return best


def _symbol_terms(proofs: Iterable[Proof]) -> set[str]:
    terms: set[str] = set()
    for proof in proofs:
        terms.update(tokenize(f"{proof.subject} {proof.object}"))
        terms |= _symbol_terms(proof.premises)
    return terms


def chain_steps(proof: Proof) -> list[str]:
    """Stated facts in proof order; each derivation is noted after the premise that completes it."""
    if not proof.premises:
        return [f"{proof.fact} {_brackets(proof.units)}"]
    steps = [step for premise in proof.premises for step in chain_steps(premise)]
    steps[-1] += f" (so {proof.fact} by {proof.rule})"
    return steps


def chain_answer(proof: Proof, lead: str = "", *, reason_first: bool = False, more: Sequence[Proof] = ()) -> Draft:
    """The proof's conclusion (or `lead`), because of its chain (and those of `more`); with
    `reason_first` (a question asking why), the chain itself, since restating what was asked
    answers nothing: its last step still ends "(so <conclusion> by <rule>)"."""
    steps = "; ".join(step for each in (proof, *more) for step in chain_steps(each))
    cited = _distinct(uid for each in (proof, *more) for uid in each.leaf_units())
    method = f"proof chain for '{proof.fact}' by {proof.rule}"
    if reason_first:
        return Draft(f"Because {steps}.", cited, method)
    return Draft.led(lead or proof.fact, f"{steps}.", cited, method)


def _names_both_ends(question: str, proof: Proof) -> bool:
    asked = _stems(question)
    return all(_contains(asked, _stems(name)) for name in (proof.subject, proof.object))


def _stems(text: str) -> list[str]:
    """Every word stemmed, stopwords kept, so short names survive."""
    words = (word.strip(_EDGE).lower().removesuffix("'s") for word in text.replace("_", " ").split())
    return [stem(word) for word in words if word]


def _contains(words: Sequence[str], part: Sequence[str]) -> bool:
    size = len(part)
    return size > 0 and any(list(words[i : i + size]) == list(part) for i in range(len(words) - size + 1))


# --- quoting units -----------------------------------------------------------------------------


def claims_answer(units: Sequence[KnowledgeUnit], question: Question, lead: KnowledgeUnit, by_sentence: bool) -> Draft:
    """The lead unit's text, then up to two more kept units that cover enough focus words. With
    `by_sentence` (a question asking for claims, not one whose own form found nothing), only
    the sentences of a unit cut from prose that are about the question (`quoted_text`).
    Otherwise a question asking for a name or an item found none in the sentences naming its
    terms, so its answer may be a referent elsewhere in the unit or the heading the unit stands
    under ("5. Bus contract" over "… the decision be deferred to the May meeting"): such a unit
    is quoted whole, under its heading."""
    chosen = [lead, *supporting(units, question.cues, exclude={lead.id})]
    if by_sentence:
        text = " ".join(_quote(quoted_text(unit, question.terms), unit.id) for unit in chosen)
    else:
        text = " ".join(_quote(_under_heading(unit), unit.id) for unit in chosen)
    return Draft(text, tuple(u.id for u in chosen), f"quoted {lead.id} and {len(chosen) - 1} supporting unit(s)")


def _under_heading(unit: KnowledgeUnit) -> str:
    """A prose unit's text under the heading it was read beneath (the plain-text reader keeps a
    heading as the unit's title, not as its first words); an authored unit's body as it is."""
    if unit.location is None or not unit.location.prose or not unit.title:
        return unit.body
    return f"{unit.title.rstrip(':. ')}: {unit.body}"


def procedure_answer(lead: KnowledgeUnit, units: Sequence[KnowledgeUnit], cues: QuestionCues) -> Draft:
    """The procedure's steps, numbered afresh, under its intro (or topic), with its condition."""
    intro, steps = procedure_steps(lead.body)
    heading = (intro or lead.topic).rstrip(".: ")
    listed = (
        steps[0].rstrip(".")
        if len(steps) == 1
        else "; ".join(f"{n}. {step.rstrip('.')}" for n, step in enumerate(steps, start=1))
    )
    condition = f" (condition: {' '.join(lead.condition.split()).rstrip('.')})" if lead.condition else ""
    extra = supporting(units, cues, exclude={lead.id})
    text = " ".join([f"{heading}: {listed}{condition} [{lead.id}].", *(_quote(u.body, u.id) for u in extra)])
    return Draft(text, (lead.id, *(u.id for u in extra)), f"procedure of {lead.id}")


_BULLET = re.compile(r"^\s*(?:[-*+\u2022]|\d+[.)])\s+")
_INLINE_NUMBER = re.compile(r"(?:^|\s)\d+[.)]\s+")


def procedure_steps(procedure: str) -> tuple[str, list[str]]:
    """The intro before the first numbered or bulleted step, and the steps.

    One line is split at inline numbers ("Do X. 1. a 2. b"); several lines at bullets, an
    unmarked line continuing the step above it. Without any marks every line is a step.
    """
    lines = [" ".join(line.split()) for line in procedure.splitlines() if line.strip()]
    if len(lines) == 1:
        intro, *steps = _INLINE_NUMBER.split(lines[0])
        return (intro.strip(), steps) if steps else ("", lines)
    if not any(_BULLET.match(line) for line in lines):
        return "", lines
    intro: list[str] = []
    steps: list[str] = []
    for line in lines:
        if _BULLET.match(line):
            steps.append(_BULLET.sub("", line))
        elif steps:
            steps[-1] += " " + line
        else:
            intro.append(line)
    return " ".join(intro), steps


def comparison_answer(units: Sequence[KnowledgeUnit], cues: QuestionCues) -> Draft:
    """Units naming every compared side first, then each side's own units; a side no quoted unit
    mentions is named as having no evidence."""
    sides = [(name, tokenize(name)) for name in cues.compared]
    used = [u for u in units if all(_mentions(u, stems) for _, stems in sides)][:MAX_SUPPORTING]
    parts = [_quote(u.body, u.id) for u in used]
    for name, stems in sides:
        own = [u for u in units if u not in used and _mentions(u, stems)][:MAX_SUPPORTING]
        if own:
            parts.append(f"{name}: " + " ".join(_quote(u.body, u.id) for u in own))
        elif not any(_mentions(u, stems) for u in used):
            parts.append(f"{name}: no kept evidence mentions it.")
        used += own
    cited = tuple(u.id for u in used)
    return Draft(" ".join(parts), cited, f"compared {' / '.join(cues.compared)} over {len(cited)} unit(s)")


def supporting(units: Sequence[KnowledgeUnit], cues: QuestionCues, exclude: set[str]) -> list[KnowledgeUnit]:
    """Kept units that alone cover enough focus words; one shared word ("file") is too little."""
    return [u for u in units if u.id not in exclude and _covers(u, cues)][:MAX_SUPPORTING]


def _covers(unit: KnowledgeUnit, cues: QuestionCues) -> bool:
    coverage = focus_coverage(cues, [unit_text(unit)])
    return coverage.enough and bool(coverage.covered)


def _mentions(unit: KnowledgeUnit, stems: list[str]) -> bool:
    words = set(tokenize(unit_text(unit)))
    return bool(stems) and all(stem in words for stem in stems)


def _quote(text: str, unit_id: str) -> str:
    """The unit's text on one line with its citation before the final full stop."""
    flat = " ".join(text.split()).rstrip(".")
    return f"{flat} [{unit_id}]."


def _brackets(unit_ids: Iterable[str]) -> str:
    return " ".join(f"[{uid}]" for uid in _distinct(unit_ids))


def _distinct(ids: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(ids))
