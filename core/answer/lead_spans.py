"""A lead grown to keep what makes it an answer: its currency, the ordinal and the complement of a
recurring date, the time said with it, and every item of a coordination the question does not
choose between.

"£30" was cut to "30" (the symbol has no word to match), "the second Tuesday, 7.30 pm" to
"Tuesday", "the first Saturday of September" to "Saturday", and "£35 for full members and £15
for junior members" to "£35", "the time, the visibility and the hours" to "time". Each extension reads the sentence's tags, chunks and the lexicon:
a currency symbol is a character of Unicode category Sc; a weekday is what the lexicon files
under "day of the week"; a date's complement is an "of" phrase naming a date or a stretch of time.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from core.answer.attribute_answers import asks_matter
from core.nlp.chunk import noun_phrases
from core.nlp.tagging import Token
from core.question.answer_types import AnswerType, Expected
from core.question.typed_spans import Span, typed_spans
from core.text.tokenizer import tokenize
from core.text.words import COORDINATORS, ORDINALS

_WEEKDAY = "day of the week"
_TIMES = frozenset(("time period", "time unit"))
_LEXICON_DEPTH = 20
_DATE = Expected(AnswerType.DATE)
# Types whose answer is a noun phrase, so a list of noun phrases answers them whole. A date or an
# amount has its own coordination below; a reason, a manner or a definition is a clause.
_LISTABLE = frozenset((AnswerType.THING, AnswerType.KIND, AnswerType.PERSON, AnswerType.LIST))


def extended(span: Span, tokens: Sequence[Token], text: str, question: Sequence[Token], expected: Expected) -> Span:
    """The lead with what it needs to stand alone as an answer of the expected type."""
    if expected.type is AnswerType.DATE:
        return _recurring_date(span, tokens, text)
    if expected.type is AnswerType.NUMBER:
        return _coordinated(_with_currency(span, tokens, text), tokens, text, question)
    if expected.type is AnswerType.KIND and asks_matter(expected.head):
        return _with_modifiers(span, tokens, text)
    return span


def listed(span: Span, tokens: Sequence[Token], text: str, asked: frozenset[str], expected: Expected) -> Span:
    """The chosen lead grown to the list of noun phrases it is an item of ("the time, the
    visibility and the hours" asked what the keeper records), when the question names no word of
    the list beyond the lead and the asked class ("what movements"): naming another item, it
    asks about that item ("Apart from oars, …"), and the lead was chosen beside it."""
    if expected.type not in _LISTABLE:
        return span
    items = _noun_list(span, tokens)
    if not items:
        return span
    named = asked - set(tokenize(expected.head))
    rest = [t for a, b in items for i, t in enumerate(tokens[a:b], a) if not span.first <= i <= span.last]
    if named & {s for t in rest for s in tokenize(t.word)}:
        return span
    return _slice(tokens, text, min(span.first, items[0][0]), max(span.last, items[-1][1] - 1))


def says_class(span: Span, tokens: Sequence[Token], expected: Expected) -> bool:
    """Asked "what X", the phrase writes X with the lead ("code 4471", "oxalic acid treatment"):
    the sentence itself says the lead is an X, a closer fit than a phrase only standing in the
    question's gap ("The shed padlock | opens with code 4471", asked "What is the code for …")."""
    head = set(tokenize(expected.head)) if expected.type is AnswerType.KIND else set()
    return bool(head) and any(head == set(tokenize(t.word)) for t in tokens[span.first : span.last + 1])


def is_currency(token: Token) -> bool:
    return bool(token.word) and all(unicodedata.category(ch) == "Sc" for ch in token.word)


def _slice(tokens: Sequence[Token], text: str, first: int, last: int) -> Span:
    return Span(text[tokens[first].start : tokens[last].end], first, last)


def _with_modifiers(span: Span, tokens: Sequence[Token], text: str) -> Span:
    """ "galvanised steel", not "steel": asked for a material, the words that say which kind of it
    stay with the noun. A participle before a noun, after a determiner or a preposition, modifies
    it ("made of | galvanised steel"); the tagger calls it a verb, the chunker leaves it out."""
    first = span.first
    while first > 0 and (
        tokens[first - 1].tag == "ADJ"
        or (tokens[first - 1].tag == "VERB" and first > 1 and tokens[first - 2].tag in ("DET", "ADP"))
    ):
        first -= 1
    return span if first == span.first else _slice(tokens, text, first, span.last)


def _with_currency(span: Span, tokens: Sequence[Token], text: str) -> Span:
    """ "£30", not "30": the symbol written against the number is part of the amount."""
    first = span.first
    if first > 0 and is_currency(tokens[first - 1]) and tokens[first - 1].end == tokens[first].start:
        return _slice(tokens, text, first - 1, span.last)
    return span


def _recurring_date(span: Span, tokens: Sequence[Token], text: str) -> Span:
    """A weekday with its ordinal ("the second Tuesday"), its "of" complement ("of September",
    "of each month") and a time said right after it (", 7.30 pm")."""
    if span.first != span.last or not _is_weekday(tokens[span.first].word):
        return span
    first, last = span.first, span.last
    if first > 0 and tokens[first - 1].word.lower() in ORDINALS:
        first -= 1
        if first > 0 and tokens[first - 1].tag == "DET":
            first -= 1
    if last + 2 < len(tokens) and tokens[last + 1].word.lower() == "of":
        last = _time_phrase_end(tokens, last + 2) or last
    dates = typed_spans(tokens, text, _DATE)
    if last + 2 < len(tokens) and tokens[last + 1].word == ",":
        time = next((d for d in dates if d.first == last + 2 and any(ch.isdigit() for ch in d.text)), None)
        if time is not None:
            last = time.last
    return span if (first, last) == (span.first, span.last) else _slice(tokens, text, first, last)


def _time_phrase_end(tokens: Sequence[Token], start: int) -> int | None:
    """The last token of the noun phrase at `start` when its head is a stretch of time ("each
    month", "September"), else None."""
    from core.nlp import lexicon_or_none

    lex = lexicon_or_none()
    chunk = next((c for c in noun_phrases([(t.word, t.tag) for t in tokens]) if c[0] == start), None)
    if lex is None or chunk is None:
        return None
    head = tokens[chunk[1] - 1].word.lower()
    return chunk[1] - 1 if _TIMES & lex.classes(head, "n", depth=_LEXICON_DEPTH, senses=2) else None


def _is_weekday(word: str) -> bool:
    from core.nlp import lexicon_or_none

    lex = lexicon_or_none()
    return (
        lex is not None
        and word.isalpha()
        and _WEEKDAY in lex.classes(word.lower(), "n", depth=_LEXICON_DEPTH, senses=2)
    )


def _coordinated(span: Span, tokens: Sequence[Token], text: str, question: Sequence[Token]) -> Span:
    """Amounts coordinated with their qualifiers ("£35 for full members and £15 for junior
    members"): the question naming one qualifier chooses its amount; naming none, it asks for all."""
    items = _coordination_of(span.first, tokens)
    if len(items) < 2:
        return span
    asked = {s for t in question for s in tokenize(t.word)}
    named = [
        (len(asked & {s for t in tokens[start:end] for s in tokenize(t.word)}), amount, start)
        for amount, start, end in items
    ]
    overlap, amount, start = max(named, key=lambda n: n[0])
    if overlap:
        return span if amount == span.first else _slice(tokens, text, amount, start - 2)
    return _slice(tokens, text, items[0][0], items[-1][2] - 1)


def _coordination_of(first: int, tokens: Sequence[Token]) -> list[tuple[int, int, int]]:
    """The coordination of amounts (see `_items`) the amount at `first` is one of, or []."""
    if not any(t.tag == "ADP" for t in tokens[first:]) or not any(t.word.lower() in COORDINATORS for t in tokens):
        return []  # no qualifier or no coordination: the sentence is not chunked for it
    chunks = {start: end for start, end in noun_phrases([(t.word, t.tag) for t in tokens])}
    for start in range(first + 1):
        items = _items(start, tokens, chunks)
        if any(amount == first for amount, _, _ in items):
            return items
    return []


def _items(first: int, tokens: Sequence[Token], chunks: dict[int, int]) -> list[tuple[int, int, int]]:
    """(amount start, qualifier start, qualifier end) of each amount of a coordination opening at
    `first`, each amount followed by the same preposition and a noun phrase (`chunks`: the
    sentence's noun phrases, start → end)."""
    items, at, preposition = [], first, None
    while at < len(tokens):
        amount = at + 1 if is_currency(tokens[at]) else at
        if amount >= len(tokens) or tokens[amount].tag != "NUM":
            break
        while amount + 1 < len(tokens) and tokens[amount + 1].tag == "NUM":
            amount += 1
        adp = amount + 1
        if adp >= len(tokens) or tokens[adp].tag != "ADP" or adp + 1 not in chunks:
            break
        if preposition is not None and tokens[adp].word.lower() != preposition:
            break
        preposition = tokens[adp].word.lower()
        end = chunks[adp + 1]
        items.append((at, adp + 1, end))
        at = end
        while at < len(tokens) and (tokens[at].word == "," or tokens[at].word.lower() in COORDINATORS):
            at += 1
        if at == end:
            break
    return items


def _noun_list(span: Span, tokens: Sequence[Token]) -> list[tuple[int, int]]:
    """The noun-phrase chunks (start, end exclusive) of the list the one holding the span is an
    item of: chunks of one head category joined by commas and a coordinating conjunction before
    the last ("A, B and C", "A or B", "A and B and C"). Commas alone join appositions ("Hutton,
    a geologist"); "A, and B" joins clauses (a serial comma needs a third item); a list ends at
    its last item ("A, B and C, D and E" is two); a name joined to a common noun is seldom one
    list, and a fronted phrase is none."""
    chunks = noun_phrases([(t.word, t.tag) for t in tokens])
    own = next((c for c in chunks if c[0] <= span.first and span.last < c[1]), None)
    if own is None:
        return []
    head = tokens[own[1] - 1].tag
    items = [c for c in chunks if tokens[c[1] - 1].tag == head]
    joins = [_gap(tokens, a, b) for a, b in zip(items, items[1:])]
    at = first = last = items.index(own)
    while first > 0 and (gap := joins[first - 1]) is not None:
        if gap == (True, False) and _fronted(tokens, items[first - 1]):
            break
        first -= 1
    while last < len(joins) and joins[last] is not None:
        last += 1
    start = first
    for i in range(first, last):
        gap = joins[i]
        if gap is None or not gap[1] or (gap == (False, True) and i + 1 < last and joins[i + 1] == gap):
            continue
        if start <= at <= i + 1 and (i + 1 > start + 1 or not gap[0]):
            return items[start : i + 2]
        start = i + 2
    return []


def _fronted(tokens: Sequence[Token], chunk: tuple[int, int]) -> bool:
    """A sentence opening with a preposition and this chunk: set off by a comma it is an adjunct
    ("In the evening, the keeper and his wife …"), not the first item of a list."""
    return chunk[0] == 1 and tokens[0].tag == "ADP"


def _gap(tokens: Sequence[Token], left: tuple[int, int], right: tuple[int, int]) -> tuple[bool, bool] | None:
    """How the words between two chunks join them as items of a list, (a comma, a conjunction),
    or None if they do not: commas, then at most one conjunction."""
    gap = tokens[left[1] : right[0]]
    commas = 0
    while commas < len(gap) and gap[commas].word == ",":
        commas += 1
    rest = gap[commas:]
    if not gap or len(rest) > 1 or (rest and rest[0].tag != "CCONJ"):
        return None
    return bool(commas), bool(rest)
