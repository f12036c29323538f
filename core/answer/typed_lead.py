"""The typed lead of a sentence: the span of the expected type (core/question/typed_spans.py)
nearest the words the sentence shares with the question, not one of the question's own words or
entities, trimmed and grown to whole words (core/answer/lead_spans.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from core.answer.attribute_answers import attribute_spans, is_attribute
from core.answer.lead_spans import extended, listed, says_class
from core.answer.question_gap import fills_gap, lifespan_year
from core.answer.sentence_readings import Reading
from core.nlp.tagging import Token
from core.question import Question
from core.question.answer_types import AnswerType, Expected
from core.question.relation import reversed_relation
from core.question.terms import Term
from core.question.typed_spans import Span, name_spans, typed_spans
from core.text.tokenizer import tokenize

# The types whose lead names something: after trimming it keeps a noun, a name or a number.
_NAMING = frozenset((AnswerType.PERSON, AnswerType.PLACE, AnswerType.NUMBER, AnswerType.KIND, AnswerType.THING))
_NAMING_TAGS = frozenset(("NOUN", "PROPN", "NUM"))
_HYPHENS = frozenset(("-", "\u2010", "\u2011", "\u2013"))
# A definition's subject ends at most this many words before what it is defined as ("X is …").
_SUBJECT_REACH = 3


def typed_lead(reading: Reading, question: Question, terms: Sequence[Term], expected: Expected) -> Span | None:
    """The typed span nearest the sentence's words that the question also says. A name sharing a
    word with the question is the question's own entity, not its answer; a phrase loses the
    question's words at its edges; a pronoun stands for the name it resolves to."""
    asked, asked_stems = question.tokens, question.stems
    term_stems = {s for term in terms for s in term.stems}
    tokens = reading.tokens
    hits = [i for i, t in enumerate(tokens) if set(tokenize(t.word)) & term_stems]
    own_names = _own_names(
        reading, [_stems(asked, n) for n in name_spans(asked, question.text)], asked_stems, term_stems
    )
    candidates = list(typed_spans(tokens, reading.sentence.text, expected))
    candidates += attribute_spans(tokens, reading.sentence.text, expected, candidates)
    if expected.type in (AnswerType.PERSON, AnswerType.KIND):
        candidates += [
            Span(r.antecedent, i, i)
            for i, r in reading.resolved.items()
            if tokens[i].tag == "PRON" and (r.person or expected.type is AnswerType.KIND)
        ]
    best, best_key = None, None
    for span in candidates:
        own = tokenize(span.text)  # a pronoun's span says its antecedent
        if not own or all(s in asked_stems for s in own):
            continue
        if expected.type is AnswerType.DEFINITION and not any(
            span.first - _SUBJECT_REACH <= h < span.first for h in hits
        ):
            continue  # defines something else: "Orionctl is part of Orion" does not say what Orion is
        attribute = is_attribute(span, tokens, expected)
        slot = attribute or fills_gap(question, tokens, span, expected)
        classed = says_class(span, tokens, expected)
        if span.first not in reading.resolved and expected.type is not AnswerType.DEFINITION:
            span = _trimmed(span, tokens, asked, reading.sentence.text, expected.head)
            named = attribute or any(t.tag in _NAMING_TAGS for t in tokens[span.first : span.last + 1])
            if expected.type in _NAMING and not named:
                continue  # only a modifier is left ("stationary" of "the stationary steam engine")
        if any(n.first <= span.first and span.last <= n.last for n in own_names):
            continue
        # A year of a lifespan stands alone: asked when Zhu Shijie was born, "1249" of "(1249–1314)".
        if span.first not in reading.resolved and not (
            slot and expected.type is AnswerType.DATE and lifespan_year(question, tokens, span)
        ):
            span = extended(
                _whole_words(span, tokens, reading.sentence.text), tokens, reading.sentence.text, asked, expected
            )
        if reversed_relation(question.relation, tokens, span):
            continue
        # "Who …?" asks for someone: a code ("error code E4") is a later choice.
        coded = expected.type is AnswerType.PERSON and any(ch.isdigit() for ch in span.text)
        key = (coded, not slot, not classed, -_closeness(span, hits), span.first)
        if best_key is None or key < best_key:
            best, best_key = span, key
    if best is None or best.first in reading.resolved:
        return best
    return listed(best, tokens, reading.sentence.text, asked_stems, expected)


def _own_names(
    reading: Reading, asked_names: Sequence[set[str]], asked_stems: frozenset[str], term_stems: set[str]
) -> list[Span]:
    """The question's own entities among the sentence's names: a name sharing a focus word with
    the question whose every word the question says ("Marta" of "Marta Quill") or that holds a
    name of the question whole ("Hereford Cathedral" asked about Hereford). A name sharing only a
    modifier is another entity: "the European Court of Justice" asked about the European Union's
    charter."""
    tokens = reading.tokens
    own = []
    for name in name_spans(tokens, reading.sentence.text):
        stems = _stems(tokens, name)
        if stems & term_stems and (stems <= asked_stems or any(n and n <= stems for n in asked_names)):
            own.append(name)
    return own


def _stems(tokens: Sequence[Token], span: Span) -> set[str]:
    return {s for t in tokens[span.first : span.last + 1] for s in tokenize(t.word)}


def _whole_words(span: Span, tokens: Sequence[Token], text: str) -> Span:
    """The span grown to whole written words: the tokenizer splits "anti-colonial" and
    "ice-sheets", and a lead must not stop inside one ("anti", "sheets")."""
    first, last = span.first, span.last
    while first > 0 and tokens[first - 1].end == tokens[first].start and _joins(tokens[first - 1].word):
        first -= 1
    while last + 1 < len(tokens) and tokens[last].end == tokens[last + 1].start and _joins(tokens[last + 1].word):
        last += 1
    # A joining hyphen at an edge joined nothing.
    while first < last and not tokens[first].word[:1].isalnum():
        first += 1
    while last > first and not tokens[last].word[-1:].isalnum():
        last -= 1
    if (first, last) == (span.first, span.last):
        return span
    return Span(text[tokens[first].start : tokens[last].end], first, last)


def _joins(word: str) -> bool:
    return word[:1].isalnum() or word in _HYPHENS


def _closeness(span: Span, hits: Sequence[int]) -> float:
    """How near the span stands to all of the question's words in the sentence, each counting
    1 / (1 + its distance): the answer sits among the words that ask for it, not next to one of
    them at the edge of another clause."""
    return sum(1 / (1 + min(abs(h - span.first), abs(h - span.last))) for h in hits if not span.first <= h <= span.last)


def _trimmed(span: Span, tokens: Sequence[Token], question: Sequence[Token], text: str, head: str) -> Span:
    """The span without the question's own words at its edges ("the river Rhine" asked "which
    river"); the asked-for class noun `head` written as part of a name stays ("Fort Beauséjour"
    asked "what fort")."""
    kept = set(tokenize(head))
    own = _own_words(question)
    first, last = span.first, span.last
    while first < last and own(tokens[first]) and not _names_head(tokens[first], kept):
        first += 1
    while last > first and own(tokens[last]) and not _names_head(tokens[last], kept):
        last -= 1
    if (first, last) == (span.first, span.last):
        return span
    return Span(text[tokens[first].start : tokens[last].end], first, last)


def _own_words(question: Sequence[Token]) -> Callable[[Token], bool]:
    """Whether a word of the sentence is one the question says: the same stems, and for a noun
    the same noun (its lemma): "sand" shares its stem with "sanding" ("the sanding hopper") but
    is another word, the answer to "What is the sanding hopper filled with?"."""
    from core.nlp import lexicon_or_none

    stems = {s for t in question for s in tokenize(t.word)}
    lex = lexicon_or_none()
    nouns = {lex.lemma(t.word.lower(), "NOUN") for t in question} if lex is not None else set()

    def own(token: Token) -> bool:
        if not set(tokenize(token.word)) <= stems:
            return False
        return lex is None or token.tag != "NOUN" or lex.lemma(token.word.lower(), "NOUN") in nouns

    return own


def _names_head(token: Token, head: set[str]) -> bool:
    return bool(head) and token.tag == "PROPN" and token.word[:1].isupper() and set(tokenize(token.word)) == head
