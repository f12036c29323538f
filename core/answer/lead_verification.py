"""val-grounded's check of a finished answer's lead: whichever solver wrote it, the lead must stand
in a cited sentence and pass the support check (core/answer/support.py) there.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.answer.coref import Resolution, resolve
from core.answer.passages import Evidence
from core.answer.sentence_readings import CONTEXT_BEFORE, continued_from, said_with
from core.answer.short_answer import SHORT_TYPES, FocusRules, rules_for
from core.answer.support import Support, check
from core.nlp.tagging import Token, tag_text
from core.question import Question
from core.question.answer_types import AnswerType
from core.question.typed_spans import Span
from core.units import KnowledgeUnit


def verify_lead(
    question: Question,
    lead: str,
    units: Sequence[KnowledgeUnit],
    context: Sequence[KnowledgeUnit] = (),
    focus: FocusRules | None = None,
) -> Support | None:
    """The support check on a finished answer's lead (`GsResult.lead`) against the units it cites,
    for val-grounded: whichever solver wrote it, the lead must stand in a cited sentence and pass.
    `context`: the other units the solver read (kept and their paragraphs), whose sentences
    resolve a cited sentence's pronouns as they did for the solver ("She left her maps …" after
    "… founded by Agnes Pryor"), but never hold the lead. None when the question asks for no
    short lead or the answer has none."""
    expected = question.expected
    if expected.type not in SHORT_TYPES or not lead or "\n" in lead:
        return None
    cited = {unit.id for unit in units}
    evidence = Evidence([*units, *(unit for unit in context if unit.id not in cited)])
    failed = None
    for sentence in evidence.ranked():
        if sentence.unit.id not in cited:
            break  # the context units come after the cited ones
        tokens = tag_text(sentence.text)
        earlier, _ = evidence.around(sentence, CONTEXT_BEFORE, 0)
        resolved = resolve(tokens, sentence.text, [s.text for s in earlier])
        span = _span_of(lead, tokens, sentence.text, resolved)
        if span is None:
            continue
        continued = continued_from(tokens, earlier) if expected.type is AnswerType.PERSON else ()
        said = said_with(sentence, resolved) + list(continued)
        support = check(question, expected, tokens, span, said, rules_for(focus, sentence.unit.id))
        if support.passed:
            return support
        failed = failed or support
    return failed or Support(False, (f'the lead "{lead}" is in no cited sentence',))


def _span_of(lead: str, tokens: Sequence[Token], text: str, resolved: dict[int, Resolution]) -> Span | None:
    at = text.find(lead)
    if at >= 0:
        inside = [i for i, t in enumerate(tokens) if t.start >= at and t.end <= at + len(lead)]
        return Span(lead, inside[0], inside[-1]) if inside else None
    return next((Span(lead, i, i) for i, r in resolved.items() if r.antecedent == lead), None)
