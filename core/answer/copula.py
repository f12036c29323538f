"""Copular questions: "What is the gate code of the depot?" asks for the value that a sentence's
"is" links the gate code to, not for a kind of gate code.

A sentence answering such a question says "the night gate code of the depot | is | 4471" (or
"4471 is the gate code"): one side of the copula holds the asked-for noun, the other side its
value. `copula_side` tells a lead's span which side it stands on, so the answer-span ranking
(core/answer/question_gap.py, `fills_gap`) prefers the value to a modifier of the question's own
noun ("night").
"""

from __future__ import annotations

from collections.abc import Sequence

from core.nlp.tagging import Token
from core.question.relation import PHRASE_TAGS
from core.text.tokenizer import tokenize
from core.text.words import BE_FORMS, BE_TENSED

# Words a noun phrase on either side of a copula may hold: its own words, the prepositions of
# what it is of ("the code *of* the depot") and an adverb ("is *also* 4471").
_SIDE_TAGS = PHRASE_TAGS | {"ADP", "ADV"}


def asks_by_copula(question: Sequence[Token]) -> bool:
    """Whether the question is "What/Which BE <noun phrase>?" with no verb of its own: it asks
    what its noun phrase is, not what it does ("What is the jar sealed with?" has a verb)."""
    words = [t for t in question if t.tag != "PUNCT"]
    at = next((i for i, t in enumerate(words) if t.word.lower() in ("what", "which")), None)
    if at is None or at + 2 >= len(words) or words[at + 1].word.lower() not in BE_TENSED:
        return False
    return all(t.tag != "VERB" for t in words[at + 2 :])


def copula_side(sentence: Sequence[Token], first: int, last: int, head: str) -> bool | None:
    """True when the tokens `first`..`last` stand on the other side of a copula from the phrase
    naming `head` (they are its value); False when they stand on the same side (they are part of
    the asked-for thing itself); None when no copula of the sentence links the two."""
    head_stems = set(tokenize(head))
    if not head_stems:
        return None
    for be, token in enumerate(sentence):
        if token.tag != "AUX" or token.word.lower() not in BE_FORMS:
            continue
        left, right = _left_side(sentence, be), _right_side(sentence, be)
        sides = [side for side in (left, right) if side[0] <= first and last <= side[1]]
        if not sides:
            continue
        own = sides[0]
        other = right if own is left else left
        if _names(sentence, other, head_stems):
            return True
        if _names(sentence, own, head_stems):
            return False
    return None


def _left_side(sentence: Sequence[Token], be: int) -> tuple[int, int]:
    start = be
    while start > 0 and sentence[start - 1].tag in _SIDE_TAGS:
        start -= 1
    return start, be - 1


def _right_side(sentence: Sequence[Token], be: int) -> tuple[int, int]:
    end = be
    while end + 1 < len(sentence) and sentence[end + 1].tag in _SIDE_TAGS:
        end += 1
    return be + 1, end


def _names(sentence: Sequence[Token], side: tuple[int, int], head_stems: set[str]) -> bool:
    first, last = side
    return first <= last and any(head_stems & set(tokenize(t.word)) for t in sentence[first : last + 1])
