"""Which of the question's focus terms a sentence's words say: as written, as an inflection, as
a number in digits or in words, or through a lexicon link that means the same (shown as the
link), and which it says the opposite of.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from core.nlp import lexicon_or_none
from core.nlp.cardinals import cardinal_value
from core.question.terms import Term
from core.text.tokenizer import tokenize

if TYPE_CHECKING:
    from core.nlp.lexicon import Lexicon, Link


@dataclass(frozen=True)
class Coverage:
    """Which of the question's terms a sentence says, which it does not, and through which links."""

    covered: tuple[str, ...]
    missing: tuple[str, ...]
    links: tuple[str, ...] = ()
    # Question words the sentence states the opposite of ("won" / "lost"), with the reason.
    opposed: tuple[str, ...] = ()
    # Unsaid terms the sentence says a synonym or a sister term of: they do not cover a term
    # (below), and are recorded for scripts/train_answerability.py.
    related: tuple[str, ...] = ()


def coverage(terms: Sequence[Term], words: Sequence[str], linked: bool = True) -> Coverage:
    """Which terms the words say, and the lexicon links that covered some of them (looked up only
    with `linked`: ranking sentences compares words as written, the check links them)."""
    # The words joined, tokenized once: the same stems as word by word (tokenize splits on
    # whitespace), without a call per word (~3% of an `ask` at 100k units).
    seen = set(tokenize(" ".join(words)))
    # A number is said in digits or in words alike ("8 books" / "eight books").
    seen |= {str(value) for word in words if (value := cardinal_value(word)) is not None}
    covered, missing, links, opposed, related = [], [], [], [], []
    lex = lexicon_or_none() if linked else None
    for term in terms:
        value = cardinal_value(term.word)
        if term.found_in(seen) or (value is not None and str(value) in seen):
            covered.append(term.word)
            continue
        link, near = _linked(lex, term, words) if lex is not None else (None, False)
        if link is not None and link.kind == "antonym":
            missing.append(term.word)
            opposed.append(link.via)
        elif link is not None:
            covered.append(term.word)
            links.append(link.via)
        else:
            missing.append(term.word)
            if near:
                related.append(term.word)
    return Coverage(tuple(covered), tuple(missing), tuple(links), tuple(opposed), tuple(related))


# Links that say the sentence's word means the question's: the same lemma or a derivation ("die" /
# "death"). Siblings ("carried" / "defeated": both kinds of win) do not, and neither does the
# sentence's word being a kind of the question's ("shoes" for "footwear"): letting hypernyms cover
# left SQuAD dev F1 unchanged (48.15) while answering more, so the stricter reading stays.
# Antonyms are returned too, so that the caller can see the sentence says the opposite.
_COVERING = frozenset(("same-lemma", "derivation"))


def _linked(lex: Lexicon, term: Term, words: Sequence[str]) -> tuple[Link | None, bool]:
    """The first sentence word that means the term (or says its opposite), as a lexicon Link, and
    whether an earlier word is only a synonym or a sister term of it."""
    if term.is_name:
        return None, False
    near = False
    # Only a word spelt as the term links to a term the lexicon lacks (a coined word, a code).
    known, spelt = lex.knows(term.word), " ".join(term.word.lower().split())
    for word in dict.fromkeys(w.lower() for w in words if w[:1].isalpha() and len(w) > 2):
        if word != spelt and not (known and lex.knows(word)):
            continue
        link = lexicon_link(lex, term.word, word)
        if link is None:
            continue
        if link.kind in _COVERING or link.kind == "antonym":
            return link, near
        near = True
    return None, near


@lru_cache(maxsize=65536)
def _cached_link(lex: Lexicon, a: str, b: str) -> Link | None:
    return lex.link(a, b)


def lexicon_link(lex: Lexicon, a: str, b: str) -> Link | None:
    return _cached_link(lex, a, b)
