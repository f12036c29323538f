"""The spans of a sentence that are of the type a question asks for (answer_types.py): names,
places, people and agents, dates, quantities with their units, reasons, noun phrases.

Every rule reads general English: name and number shapes, UPOS tags, noun-phrase chunks and
WordNet classes of a phrase's head (core/nlp) — never a word of a particular KB.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.nlp.cardinals import SCALES
from core.nlp.chunk import noun_phrases as chunk_spans
from core.nlp.tagging import Token
from core.question.answer_types import LEXICON_DEPTH, AnswerType, Expected
from core.text.tokenizer import tokenize
from core.text.words import (
    GROUP_CLASSES,
    LOCATIVE_PREPOSITIONS,
    NAME_JOINERS,
    PERCENT_HEADS,
    PERSON_CLASSES,
    PLACE_PREPOSITIONS,
    YEAR_TOKEN,
)

_MONTHS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
)
_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday"
DATE_PATTERN = re.compile(
    r"\b(?:" + _WEEKDAYS.replace(" ", "|") + r")s?\b"
    r"|\b(?:(?:early|late|mid|the)[- ])?\d{1,2}(?:st|nd|rd|th)(?:[- ]century| and \d{1,2}(?:st|nd|rd|th) centuries)"
    r"|\b(?:(?:\d{1,2} )?(?:" + _MONTHS.replace(" ", "|") + r")\.?(?: \d{1,2}(?:st|nd|rd|th)?)?,? (?:\d{3,4}))"
    r"|\b(?:\d{1,2} )?(?:" + _MONTHS.replace(" ", "|") + r")\b(?: \d{1,2}\b)?"
    r"|\b\d{3,4}s\b|\b(?:1\d{3}|20\d{2}|[1-9]\d{2})(?:\s?(?:BC|BCE|AD|CE)\b)?"
    r"|\b\d{1,2}[:.]\d{2}(?:\s?[ap]\.?m\.?)?|\b\d{1,2}\s?[ap]\.?m\.?",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Span:
    """A run of a sentence's tokens of the type the question expects its answer to be."""

    text: str
    first: int  # token index
    last: int


def typed_spans(tokens: Sequence[Token], text: str, expected: Expected) -> list[Span]:
    """Spans of the sentence that are of the expected type, in sentence order."""
    kind = expected.type
    if kind is AnswerType.DATE:
        return _regex_spans(DATE_PATTERN, tokens, text)
    if kind is AnswerType.NUMBER:
        # "how many loaves" names the unit; "what size" names only the measure: "40 cm" keeps its unit.
        bare = bool(expected.head) and expected.cue.startswith("how")
        return _quantities(_number_spans(tokens, text, bare=bare), tokens, text, expected)
    if kind is AnswerType.PLACE:
        return places(name_spans(tokens, text), tokens, text) + locative_phrases(tokens, text)
    if kind is AnswerType.PERSON:
        named = [_named_phrase(span, tokens, text) for span in agents(name_spans(tokens, text), tokens, text)]
        # "by the education officer, Tom Harcourt": the name set beside the noun is the agent.
        return named + [
            p
            for p in passive_agents(tokens, text)
            if not any(p.first <= n.last and n.first <= p.last + 2 for n in named)
        ]
    if kind is AnswerType.REASON:
        return _reason_spans(tokens, text)
    if kind is AnswerType.DEFINITION:
        # "X is a …": what follows the copula, to the end of its clause.
        return _after_spans(tokens, text, ("is", "are", "was", "were", "means", ":"))
    if kind is AnswerType.MANNER:
        return _after_spans(tokens, text, ("by", "through", "using", "with", "via")) or noun_phrases(tokens, text)
    if kind is AnswerType.KIND:
        names = name_spans(tokens, text) + _number_spans(tokens, text, bare=True)
        phrases = noun_phrases(tokens, text)
        head = set(tokenize(expected.head))
        own = [p for p in phrases if head & set(tokenize(p.text))]
        return own + names + [p for p in phrases if p not in own]
    return noun_phrases(tokens, text)


# A determiner, possessive or modifier before the head: bare singular nouns after a preposition
# are mostly idioms ("in fact", "in addition", "on time"), not places.
_PLACE_MODIFIERS = frozenset(("DET", "ADJ", "NUM", "PRON", "PART", "NOUN"))
# WordNet classes of a place's noun in one of its two commonest senses: something physical, and
# no stretch of time ("in the evening" is no place). Abstractions ("on the subject") are none.
_PHYSICAL = "physical entity"
_TIMES = frozenset(("time period", "time unit"))
_PLACE_SENSES = 2


def agents(names: list[Span], tokens: Sequence[Token], text: str) -> list[Span]:
    """Names that can be a person or an organisation: not after a place preposition, not a date."""
    dates = _regex_spans(DATE_PATTERN, tokens, text)
    return [
        span
        for span in names
        if not (span.first > 0 and tokens[span.first - 1].word.lower() in PLACE_PREPOSITIONS)
        and not any(d.first <= span.first <= d.last for d in dates)
    ]


# Senses of an agent's head noun read: its commonest only ("the end" is a footballer in a rare one).
_AGENT_SENSES = 1


def passive_agents(tokens: Sequence[Token], text: str) -> list[Span]:
    """Common-noun doers a passive names after "by": "carried out by | the overhead line team",
    "assigned by | the education officer": the phrase right after "by" that follows a verb, whose
    head noun is, in its commonest sense, a kind of person or of social group ("by the river",
    "by the end of May" name none)."""
    from core.nlp import lexicon_or_none

    lex = lexicon_or_none()
    if lex is None:
        return []
    spans = []
    for start, end in chunk_spans([(t.word, t.tag) for t in tokens]):
        if start < 2 or tokens[start - 1].word.lower() != "by":
            continue
        # The participle, or its particle ("carried out by").
        verb = start - 3 if tokens[start - 2].tag in ("ADP", "PART") and start >= 3 else start - 2
        if tokens[verb].tag != "VERB":
            continue
        head = tokens[end - 1]
        if head.tag != "NOUN":
            continue
        classes = lex.classes(head.word.lower(), "NOUN", depth=LEXICON_DEPTH * 2, senses=_AGENT_SENSES)
        if classes & (PERSON_CLASSES | GROUP_CLASSES):
            spans.append(_slice(tokens, text, start, end - 1))
    return spans


def places(names: list[Span], tokens: Sequence[Token], text: str) -> list[Span]:
    """Names that can be a place: not the agent of a passive ("founded by Agnes Pryor"), not a
    date ("Monday", "May 1908")."""
    dates = _regex_spans(DATE_PATTERN, tokens, text)
    return [
        span
        for span in names
        if not (span.first > 0 and tokens[span.first - 1].word.lower() == "by")
        and not any(d.first <= span.first <= d.last for d in dates)
    ]


def locative_phrases(tokens: Sequence[Token], text: str) -> list[Span]:
    """Common-noun places: a noun phrase right after a locative preposition whose head is a
    physical thing and no time ("kept in | the reading room", "on | the first floor"), with the
    "of" phrase that completes it. A phrase whose own words hold a name is left to the name."""
    from core.nlp import lexicon_or_none

    lex = lexicon_or_none()
    spans = []
    chunks = chunk_spans([(t.word, t.tag) for t in tokens])
    for at, (start, end) in enumerate(chunks):
        words = tokens[start:end]
        head = words[-1]
        if start == 0 or tokens[start - 1].word.lower() not in LOCATIVE_PREPOSITIONS or tokens[start - 1].tag != "ADP":
            continue
        if head.tag != "NOUN" or any(
            t.tag == "PROPN" or (t.word[:1].isupper() and i + start > 0) for i, t in enumerate(words)
        ):
            continue
        plural = lex is not None and lex.lemma(head.word, "n") != head.word.lower()
        if len(words) == 1 and not plural:
            continue
        if not any(t.tag in _PLACE_MODIFIERS for t in words[:-1]) and not plural:
            continue
        classes = lex.classes(head.word, "n", depth=20, senses=_PLACE_SENSES) if lex is not None else frozenset()
        if _PHYSICAL in classes and not classes & _TIMES:
            # "of" and the phrase after it complete the place: "the arid plains of Central Asia".
            following = chunks[at + 1] if at + 1 < len(chunks) else None
            if following is not None and following[0] == end + 1 and tokens[end].word.lower() == "of":
                end = following[1]
            spans.append(_slice(tokens, text, start, end - 1))
    return spans


def _named_phrase(name: Span, tokens: Sequence[Token], text: str) -> Span:
    """A name that only qualifies a common noun stands for that noun's phrase: "Harwick" in "the
    Harwick boatyard" names a place, the boatyard is who maintains."""
    for start, end in chunk_spans([(t.word, t.tag) for t in tokens]):
        if start <= name.first and name.last == end - 2 and tokens[end - 1].tag == "NOUN":
            return _slice(tokens, text, start, end - 1)
    return name


def _quantities(numbers: list[Span], tokens: Sequence[Token], text: str, expected: Expected) -> list[Span]:
    """A year or a day of a date is not a quantity; asked for a percentage, only a percentage is."""
    spans = [s for s in numbers if not (s.first == s.last and YEAR_TOKEN.match(tokens[s.first].word))]
    dates = _regex_spans(DATE_PATTERN, tokens, text)
    spans = [s for s in spans if not any(d.first <= s.first <= d.last and d.first < d.last for d in dates)]
    if expected.head.lower() in PERCENT_HEADS:
        spans = [s for s in spans if "%" in s.text or "percent" in s.text.lower()]
    return spans


def _slice(tokens: Sequence[Token], text: str, first: int, last: int) -> Span:
    return Span(text[tokens[first].start : tokens[last].end], first, last)


def _regex_spans(pattern: re.Pattern[str], tokens: Sequence[Token], text: str) -> list[Span]:
    spans = []
    for match in pattern.finditer(text):
        inside = [i for i, t in enumerate(tokens) if t.start >= match.start() and t.end <= match.end()]
        if inside:
            spans.append(Span(match.group(), inside[0], inside[-1]))
    return spans


def _number_spans(tokens: Sequence[Token], text: str, bare: bool) -> list[Span]:
    """A number run with its unit (the noun after it) unless the question names the unit."""
    spans, i = [], 0
    while i < len(tokens):
        if tokens[i].tag != "NUM":
            i += 1
            continue
        first = i
        if first > 0 and tokens[first - 1].word in "$£€":
            first -= 1
        elif first > 0 and tokens[first].word.lower() in SCALES and tokens[first - 1].word.lower() in ("a", "an"):
            first -= 1  # "a dozen", "a hundred": the article is the number one
        while i + 1 < len(tokens) and (
            tokens[i + 1].tag == "NUM"
            or (
                tokens[i + 1].word in "-/"
                and i + 2 < len(tokens)
                and tokens[i + 2].tag == "NUM"
                and tokens[i + 1].start == tokens[i].end
            )
        ):
            i += 1  # "31-07-88" is one number
        last = i
        if i + 1 < len(tokens) and tokens[i + 1].word in ("%", "percent", "per cent"):
            last = i + 1
        elif i + 2 < len(tokens) and tokens[i + 1].word == "-" and tokens[i + 2].tag == "NOUN":
            last = i + 2  # "90-day"
        elif not bare and i + 1 < len(tokens) and tokens[i + 1].tag == "NOUN":
            last = i + 1
        spans.append(_slice(tokens, text, first, last))
        i += 1
    return spans


def name_spans(tokens: Sequence[Token], text: str) -> list[Span]:
    """Runs of name words, joined across "of" / "of the" / "the" between two of them ("Duchy of
    Normandy", "Edward the Confessor"). A name word is a proper noun, or a capitalised noun or
    adjective past the sentence's first word (the tagger misses some names)."""
    named = [_is_name(tokens, i) for i in range(len(tokens))]
    if len(tokens) > 1 and named[1] and tokens[0].word[:1].isupper() and tokens[0].tag in ("NOUN", "ADJ"):
        named[0] = True  # "Ada Brenner repaired …": a first word the next name word continues
    spans, i = [], 0
    while i < len(tokens):
        if not named[i]:
            i += 1
            continue
        first = i
        while True:
            if i + 1 < len(tokens) and named[i + 1]:
                i += 1
                continue
            gap = next(
                (
                    n
                    for n in (1, 2)
                    if i + n + 1 < len(tokens)
                    and named[i + n + 1]
                    and " ".join(t.word.lower() for t in tokens[i + 1 : i + n + 1]) in NAME_JOINERS
                ),
                None,
            )
            if gap is None:
                break
            i += gap + 1
        spans.append(_slice(tokens, text, first, i))
        i += 1
    return spans


def _is_name(tokens: Sequence[Token], index: int) -> bool:
    token = tokens[index]
    if token.tag == "PROPN":
        return token.word[:1].isupper() or any(ch.isdigit() for ch in token.word)
    return index > 0 and token.tag in ("NOUN", "ADJ") and token.word[:1].isupper()


def noun_phrases(tokens: Sequence[Token], text: str) -> list[Span]:
    """The sentence's noun-phrase chunks (core/nlp/chunk.py)."""
    chunks = chunk_spans([(t.word, t.tag) for t in tokens])
    return [_slice(tokens, text, start, end - 1) for start, end in chunks]


_CLAUSE_ENDS = frozenset(",;:.!?()")


def _after_spans(tokens: Sequence[Token], text: str, markers: Sequence[str]) -> list[Span]:
    """What follows a marker word up to the next punctuation ("by | sending troops")."""
    spans = []
    for i, token in enumerate(tokens):
        if token.word.lower() in markers and i + 1 < len(tokens):
            end = next((j - 1 for j in range(i + 1, len(tokens)) if tokens[j].word in _CLAUSE_ENDS), len(tokens) - 1)
            if end > i:
                spans.append(_slice(tokens, text, i + 1, end))
    return spans


def _reason_spans(tokens: Sequence[Token], text: str) -> list[Span]:
    spans = []
    for i, token in enumerate(tokens):
        word = token.word.lower()
        if word in ("because", "due", "owing") or (word == "to" and i > 0 and tokens[i - 1].word.lower() == "order"):
            start = i + 1
            while start < len(tokens) and tokens[start].word.lower() in ("of", "to"):
                start += 1
            end = next((j - 1 for j in range(start, len(tokens)) if tokens[j].word in ".;"), len(tokens) - 1)
            if end >= start:
                spans.append(_slice(tokens, text, start, end))
    return spans
