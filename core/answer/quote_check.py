"""The support check of an answer quoted without a typed lead (a list, a reason, quoted claims):
the quote must cover the question's focus terms and not be negated where the question is not (or
the reverse); otherwise the draft cannot tell, and quotes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from core.answer.answer_forms import Draft, quoted_question
from core.answer.support import QUOTE, check, negated
from core.kernel.events import AnswerDetail
from core.nlp.tagging import TaggedOnRead
from core.question import Question
from core.question.answer_types import AnswerType, Expected
from core.question.intent_cues import unit_text
from core.question.terms import Term
from core.units import KnowledgeUnit


def _quote_allowance(expected: Expected, terms: Sequence[Term]) -> int | None:
    """Unsaid terms a quoted answer may leave: half for a reason (said in words of its own, as
    the explanation form allows), else the quote default. (None unsaid for a definition quoted
    because no sentence says "X is …" measured 0.2 F1 better on the SQuAD sample but made
    every such question weak, and each weak answer costs a replan: ask at 100k 20 → 30 ms.)"""
    return len(terms) // 2 if expected.type is AnswerType.REASON else None


def checked(question: Question, expected: Expected, draft: Draft, units: Sequence[KnowledgeUnit] = ()) -> Draft:
    """A draft of another form (a list, a reason, quoted claims) under the same check, without a
    typed lead: the quoted evidence must cover the question's focus terms and not be negated
    where the question is not (or the reverse). Otherwise it cannot tell, and quotes it."""
    if draft.cannot_tell:
        return draft
    terms = question.required_terms(expected)
    # A quote states what it states: only a question asking about what is *not* so is flipped
    # by evidence that does not say "not".
    # The cited units' other sentences set the scene a list or a reason is quoted from.
    scene = [word for unit in units if unit.id in draft.cited for word in unit_text(unit).split()]
    # A why-question's "not" is part of what is explained ("why did she decide not to …"); the
    # reason need not repeat it.
    reason = expected.type is AnswerType.REASON
    negation = negated(question.tokens) and not reason
    # A reason is said around what it explains, in words of its own: like the explanation form
    # (answer_forms.explanation), half the question's terms are enough.
    rules = replace(QUOTE, negation=negation, allowed_missing=_quote_allowance(expected, terms))
    # Tagged only if the check reads a tag (a term its words leave unsaid).
    support = check(question, expected, TaggedOnRead(draft.text), None, scene, rules)
    detail = AnswerDetail(
        answer_type=expected.describe(), supported=support.passed, support=support.summary(), links=support.links
    )
    if support.passed:
        return replace(draft, detail=detail)
    why = "; ".join(support.reasons)
    text = f'cannot tell from the evidence what answers "{quoted_question(question.text)}" ({why}). The closest evidence says: {draft.text}'
    return Draft(text, draft.cited, f"{draft.method}; unsupported: {why}", cannot_tell=why, detail=detail)
