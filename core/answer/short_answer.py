"""Short answers of the asked type for gs-symbolic: the lead is a span of a cited sentence, then
"because:" and the sentence; when the support check (core/answer/support.py) fails, the draft says it
cannot tell and quotes the closest evidence instead.

The answer goes through named stages (`short_draft`):
1. select sentences: the kept sentences by the question's focus terms they say, then rank
   (core/answer/sentence_readings.py, `ranked_readings`);
2. resolve references: a tried sentence's pronouns and "the company" (core/answer/coref.py, `read`);
3. candidate spans: the spans of the expected type (core/question/typed_spans.py) not said by the
   question, nearest the words it shares with the question (core/answer/typed_lead.py);
4. support: the lead's check (core/answer/support.py);
5. choose: the first supported reading, else the closest (`_closer`);
6. render: the lead and its sentence (`_grounded`), or what it cannot tell (`_cannot_tell`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.answer import answerability
from core.answer.answer_forms import Draft, quoted_question
from core.answer.passages import Evidence, covered
from core.answer.sentence_readings import (
    MAX_SENTENCE_WORDS,
    Reading,
    antecedent_words,
    opens_with_reference,
    over_budget,
    ranked_readings,
    read,
)
from core.answer.support import LEAD, Rules, Support, check, lead_features
from core.answer.typed_lead import typed_lead
from core.kernel.events import AnswerDetail
from core.question import Question
from core.question.answer_types import AnswerType, Expected
from core.question.intent_cues import unit_text
from core.question.terms import Term
from core.question.typed_spans import Span
from core.units import KnowledgeUnit

# The types whose lead is a span of a sentence; yes/no, lists, reasons and comparisons keep
# their own forms (core/answer/answer_forms.py).
SHORT_TYPES = frozenset(
    (
        AnswerType.PERSON,
        AnswerType.PLACE,
        AnswerType.DATE,
        AnswerType.NUMBER,
        AnswerType.KIND,
        AnswerType.THING,
        AnswerType.MANNER,
        AnswerType.DEFINITION,
    )
)
# Sentences of the best coverage tried for a span of the expected type, at most.
MAX_TRIED = 6
# Sentences after a definition's own quoted with it, at most.
_DEFINITION_AFTER = 3
# The rules of a lead's check with no score to reach: what the other checks alone say, for
# core/answer/answerability's observers.
_UNSCORED = Rules(threshold=0.0)


@dataclass(frozen=True)
class FocusRules:
    """The unit a follow-up's conversation focus rests on (core/memory/position.Focus) and the
    rules a lead in one of its sentences is checked by; every other sentence keeps `LEAD`."""

    unit: str
    rules: Rules


def rules_for(focus: FocusRules | None, unit: str) -> Rules:
    return focus.rules if focus is not None and focus.unit == unit else LEAD


def short_draft(
    question: Question,
    expected: Expected,
    kept: Sequence[KnowledgeUnit],
    context: Sequence[KnowledgeUnit] = (),
    focus: FocusRules | None = None,
) -> tuple[Draft, AnswerDetail] | None:
    """The typed lead with its sentence when supported, else a "cannot tell" draft; None for a
    definition no sentence gives. Leads come from the kept units; `context` (the rest of their
    paragraphs) is read only for antecedents; `focus`: a conversation's focus unit and the rules a
    lead in it is checked by."""
    required = question.required_terms(expected)
    evidence = Evidence([*kept, *context])
    agent = expected.type is AnswerType.PERSON
    readings = ranked_readings(required, evidence, {unit.id for unit in kept}, agent)  # select sentences
    best: tuple[Reading, Span | None, Support] | None = None
    top = readings[0].covered if readings else 0
    if answerability.observing():
        _observe(question, required, expected, readings, evidence)
    for ranked in [r for r in readings if r.covered == top][:MAX_TRIED] or readings[:1]:
        # resolve references (a sentence ranked untagged is read now)
        reading = ranked if ranked.tokens else read(ranked.sentence, evidence, required, ranked.rank, agent)
        lead = typed_lead(reading, question, required, expected)  # candidate spans
        rules = rules_for(focus, reading.sentence.unit.id)
        support = check(question, expected, reading.tokens, lead, antecedent_words(reading), rules)  # support
        if support.passed and lead is not None:  # choose, then render (a passing lead is never None)
            return _grounded(reading, lead, support, expected, evidence, required)
        if best is None or _closer(support, lead, best):
            best = (reading, lead, support)
    if expected.type is AnswerType.DEFINITION and (best is None or best[1] is None):
        # No sentence says "X is …": what the evidence says about X is quoted instead (core/answer/quote_check.py).
        return None
    if best is None:
        return _unread(expected, evidence, kept)
    return _cannot_tell(question.text, expected, *best)


def _unread(expected: Expected, evidence: Evidence, kept: Sequence[KnowledgeUnit]) -> tuple[Draft, AnswerDetail]:
    """The draft when no kept sentence was read: none there, or every one over the budget."""
    ids = {unit.id for unit in kept}
    long = sum(over_budget(s) for s in evidence.ranked() if s.unit.id in ids)
    why = (
        f"{long} kept sentence{'s' if long > 1 else ''} over the sentence budget ({MAX_SENTENCE_WORDS:,} words "
        "read, at most; a text that lost its full stops?)"
        if long
        else "no kept sentence"
    )
    detail = AnswerDetail(answer_type=expected.describe(), support=f"failed: {why}")
    return Draft(f"cannot tell from the evidence: {why}.", (), "typed lead: no sentence", why), detail


def _observe(
    question: Question, terms: Sequence[Term], expected: Expected, readings: Sequence[Reading], evidence: Evidence
) -> None:
    """Every lead of the sentences tried, and of the next best up to MAX_TRIED (measured, never
    answered from), for core/answer/answerability's observers."""
    top = readings[0].covered if readings else 0
    tried = [r for r in readings if r.covered == top][:MAX_TRIED] or list(readings[:1])
    tried += [r for r in readings if r.covered < top][: MAX_TRIED - len(tried)]
    candidates = []
    for ranked in tried:
        agent = expected.type is AnswerType.PERSON
        reading = ranked if ranked.tokens else read(ranked.sentence, evidence, terms, ranked.rank, agent)
        lead = typed_lead(reading, question, terms, expected)
        if lead is None:
            continue
        context = antecedent_words(reading)
        features = lead_features(
            question, expected, reading.tokens, lead, context, unit_text(reading.sentence.unit).split()
        )
        candidates.append(
            answerability.Candidate(
                lead.text,
                features,
                rules=check(question, expected, reading.tokens, lead, context, _UNSCORED).passed,
                supported=check(question, expected, reading.tokens, lead, context).passed,
                top=ranked.covered == top,
            )
        )
    answerability.observe(question.text, candidates)


def _closer(support: Support, lead: Span | None, best: tuple[Reading, Span | None, Support]) -> bool:
    """Whether a failed reading is closer evidence than the best so far: more focus terms said
    with their lexicon links (the readings were ordered by terms said as written), then a lead of
    the type, then fewer failed checks; on a tie the earlier stays. A heading that only names the
    topic ("Membership.") is no closer than the sentence that states something about it."""
    _, best_lead, best_support = best
    key = (len(support.covered), lead is not None, -len(support.reasons))
    return key > (len(best_support.covered), best_lead is not None, -len(best_support.reasons))


def _detail(expected: Expected, lead: str, support: Support, reading: Reading) -> AnswerDetail:
    return AnswerDetail(
        answer_type=expected.describe(),
        lead=lead,
        supported=support.passed,
        support=support.summary(),
        links=support.links,
        resolved=tuple(str(r) for r in reading.resolved.values()),
    )


def _grounded(
    reading: Reading, lead: Span, support: Support, expected: Expected, evidence: Evidence, terms: Sequence[Term]
) -> tuple[Draft, AnswerDetail]:
    sentence = reading.sentence
    because = [sentence]
    if expected.type is AnswerType.DEFINITION:
        # A definition goes on in the unit's next sentences about the same thing ("It stores …").
        _, later = evidence.around(sentence, 0, _DEFINITION_AFTER)
        because += [
            s for s in later if s.unit.id == sentence.unit.id and (covered(terms, [s]) or opens_with_reference(s))
        ]
    said = " ".join(s.cited() for s in because)
    if reading.resolved:
        said += f" ({'; '.join(str(r) for r in reading.resolved.values())})"
    method = f"{expected.type.value} lead from {sentence.unit.id}; support {support.summary()}"
    return Draft.led(lead.text, said, (sentence.unit.id,), method), _detail(expected, lead.text, support, reading)


def _cannot_tell(
    question: str, expected: Expected, reading: Reading, lead: Span | None, support: Support
) -> tuple[Draft, AnswerDetail]:
    why = "; ".join(support.reasons)
    text = (
        f'cannot tell from the evidence {_what(expected)} answers "{quoted_question(question)}" ({why}). '
        f"The closest evidence says: {reading.sentence.cited()}"
    )
    draft = Draft(text, (reading.sentence.unit.id,), f"typed lead unsupported: {why}", cannot_tell=why)
    return draft, _detail(expected, lead.text if lead else "", support, reading)


def _what(expected: Expected) -> str:
    kind = expected.head if expected.type is AnswerType.KIND and expected.head else expected.type.value
    return f"which {kind}"
