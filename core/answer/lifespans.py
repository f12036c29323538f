"""Years written after a name as its lifespan: "Zhu Shijie (1249–1314)" says when he was born
and when he died, without the words "born" or "died". support.said_by counts the question's
"born" or "died" as said by such a sentence, and question_gap.fills_gap puts the lead on the year
asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.nlp.tagging import Token
from core.text.tokenizer import tokenize
from core.text.words import BORN_STEMS, DIED_STEMS, LIFESPAN_YEAR

_DASHES = frozenset(("-", "\u2010", "\u2011", "\u2012", "\u2013", "\u2014"))


@dataclass(frozen=True)
class Lifespan:
    """A name in a sentence followed by the years someone was born and died."""

    name: frozenset[str]  # the stems of the name the years follow
    born: int  # token index of the first year
    died: int  # token index of the second


def lifespans(sentence: Sequence[Token]) -> list[Lifespan]:
    """Every "Name (YYYY–YYYY)" of the sentence."""
    found = []
    for i in range(1, len(sentence) - 4):
        if sentence[i].word != "(" or sentence[i + 4].word != ")" or sentence[i + 2].word not in _DASHES:
            continue
        if not (LIFESPAN_YEAR.match(sentence[i + 1].word) and LIFESPAN_YEAR.match(sentence[i + 3].word)):
            continue
        start = i
        while start > 0 and sentence[start - 1].tag == "PROPN":
            start -= 1
        if start < i:
            found.append(Lifespan(frozenset(s for t in sentence[start:i] for s in tokenize(t.word)), i + 1, i + 3))
    return found


def end_asked(stems: Sequence[str]) -> str:
    """ "born" or "died" when the stems ask for one end of a life; "" otherwise."""
    if set(stems) & BORN_STEMS:
        return "born"
    return "died" if set(stems) & DIED_STEMS else ""


def said_end(stems: Sequence[str], sentence: Sequence[Token], names: set[str]) -> str | None:
    """Why the sentence says the question's "born"/"died" (`stems`) of a person it names
    (`names`: the question's name stems), shown as a link; None when it does not."""
    end = end_asked(stems)
    if not end:
        return None  # the sentence's tokens are not read (core/nlp/tagging.py, TaggedOnRead)
    span = next((s for s in lifespans(sentence) if s.name & names), None)
    if span is None:
        return None
    years = f"{sentence[span.born].word}\u2013{sentence[span.died].word}"
    return f"{'/'.join(stems)}: ({years}) after the name is a lifespan"


def asked_year(question_stems: frozenset[str], sentence: Sequence[Token], names: set[str], index: int) -> bool:
    """Whether the token at `index` is the year the question asks for: the first of a named
    person's lifespan asked "born", the second asked "died"."""
    end = end_asked(sorted(question_stems))
    return any(
        (end == "born" and span.born == index) or (end == "died" and span.died == index)
        for span in lifespans(sentence)
        if span.name & names
    )
