"""Whether a lead stands in the question's gap: where the answer to the question's wording would
be written in the sentence (after the question's verb, after its word-and-preposition pair, as
the subject it asks for, beside what "besides X" names, a year of a lifespan, or naming the asked
class itself). Fills_gap ranks leads (core/answer/typed_lead.py) and is a feature of
core/answer/support.py's lead_features.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from core.answer.copula import asks_by_copula, copula_side
from core.answer.term_coverage import lexicon_link
from core.nlp import lexicon_or_none
from core.nlp.tagging import Token
from core.question.answer_types import AnswerType, Expected
from core.question.relation import PHRASE_TAGS, subject_slot
from core.question.typed_spans import Span
from core.text.tokenizer import tokenize
from core.text.words import BESIDE_OPENERS, WH_IN_PLACE

if TYPE_CHECKING:
    from core.question import Question


def fills_gap(question: Question, sentence: Sequence[Token], lead: Span, expected: Expected) -> bool:
    """The lead's noun phrase stands where the question's gap is: right after a verb the
    question also says ("won | the majority"), after the same word-and-preposition pair
    ("attached to | the turbine casing", asked "… attached to?") or the words before a wh-word asked
    in place ("are not | monophyletic"), before the question's verb when it asks for the subject
    ("the Court of Justice | has taken"), or, asked "which X", it says
    X itself ("the ONdigital consortium"), or asked "how many X", its number counts X ("up to
    eight books", not "for three weeks"). A fact stated around the gap, not beside it, is
    usually another fact."""
    first, last = _phrase(sentence, lead)
    if expected.head and asks_by_copula(question.tokens):
        # "What is the gate code …?": the value across the copula from the code, not a kind of code.
        side = copula_side(sentence, first, last, expected.head)
        if side is not None:
            return side
    asked = question.stems
    before = sentence[first - 1] if first > 0 else None
    if before is not None and before.tag == "VERB" and set(tokenize(before.word)) & asked:
        return True
    if subject_slot(question.relation, sentence, first, last):
        return True
    # A preposition is no content word (tokenize drops it): it marks the gap only after the word
    # the question puts it after.
    if (
        before is not None
        and first > 1
        and _said_pair(_gap_pairs(question.tokens, before.tag == "ADP"), sentence[first - 2].word, before.word)
    ):
        return True
    if _beside_what_is_asked(question.tokens, sentence, first, last):
        return True
    if expected.type is AnswerType.DATE and lifespan_year(question, sentence, lead):
        return True  # "Zhu Shijie (1249–1314)" asked when he was born
    # "which X" and "how many X" name what the answer is of: "eight books", not "three weeks".
    head = set(tokenize(expected.head)) if expected.type in (AnswerType.KIND, AnswerType.NUMBER) else set()
    return bool(head) and any(head & set(tokenize(t.word)) for t in sentence[first : last + 1])


def lifespan_year(question: Question, sentence: Sequence[Token], lead: Span) -> bool:
    """The lead is the year of a lifespan after a name the question says that it asks for."""
    # Only a date asked for reads lifespans: other questions never import the reader (issue 41).
    from core.answer.lifespans import asked_year

    names = {s for t in question.tokens if t.tag == "PROPN" for s in tokenize(t.word)}
    return asked_year(question.stems, sentence, names, lead.first)


def _gap_pairs(question: Sequence[Token], prepositions: bool) -> set[tuple[str, str]]:
    """The word pairs that stand before the answer: the two words before a wh-word asked in
    place ("… Franconia and what other location?", "Cydippids are not what?"), and with
    `prepositions` every word-and-preposition pair of the question."""
    words = [t.word.lower() for t in question]
    pairs = {(words[i - 2], words[i - 1]) for i in range(2, len(words)) if words[i] in WH_IN_PLACE}
    if prepositions:
        pairs |= {(a, b) for a, b, token in zip(words, words[1:], question[1:]) if token.tag == "ADP"}
    return pairs


def _said_pair(pairs: set[tuple[str, str]], word: str, second: str) -> bool:
    """Whether the sentence's word pair is one of the question's, its first word in any form
    ("fled to" for "flee to"): the second is a preposition or a function word, said as is."""
    lex = lexicon_or_none()
    for asked, asked_second in pairs:
        if asked_second != second.lower():
            continue
        if asked == word.lower() or set(tokenize(asked)) & set(tokenize(word)):
            return True
        link = (
            lexicon_link(lex, asked, word.lower()) if lex is not None and asked.isalpha() and word.isalpha() else None
        )
        if link is not None and link.kind == "same-lemma":
            return True
    return False


_LIST_JOINS = frozenset((",", "and", "or"))


def _beside_what_is_asked(question: Sequence[Token], sentence: Sequence[Token], first: int, last: int) -> bool:
    """Asked "Besides X, what …?" (or "Along with X", "Other than X" …), the phrase listed
    right beside X: "X and | the lead", "the lead | , X"."""
    words = [t.word.lower() for t in question]
    opener = next((o for o in BESIDE_OPENERS if tuple(words[: len(o)]) == o), None)
    if opener is None:
        return False
    end = next((i for i in range(len(opener), len(words)) if words[i] in WH_IN_PLACE), len(words))
    named = {s for t in question[len(opener) : end] for s in tokenize(t.word)}
    joined_before = (
        first > 1
        and sentence[first - 1].word.lower() in _LIST_JOINS
        and set(tokenize(sentence[first - 2].word)) & named
    )
    joined_after = (
        last + 2 < len(sentence)
        and sentence[last + 1].word.lower() in _LIST_JOINS
        and set(tokenize(sentence[last + 2].word)) & named
    )
    return bool(joined_before or joined_after)


def _phrase(sentence: Sequence[Token], lead: Span) -> tuple[int, int]:
    """The noun phrase around the lead (a lead may have lost the question's words at its edges)."""
    first, last = lead.first, lead.last
    while first > 0 and sentence[first - 1].tag in PHRASE_TAGS:
        first -= 1
    while last + 1 < len(sentence) and sentence[last + 1].tag in PHRASE_TAGS:
        last += 1
    return first, last
