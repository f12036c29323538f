"""Where in the story the conversation stands: the sentence the previous answer came from, and how
far from it a referent is said.

CoQA's follow-ups walk through their text: "he" in the next question is most often someone said
in the previous answer's sentence or in the few after it, not the story's most frequent name. A
`Passage` finds that sentence (the one of the caller's view of the file that shares the most words
with the previous answer: at run time its lead, which quotes a sentence of a cited unit; in
scripts/learn_referents.py the gold rationale span) and measures, for a referent's noun, the
sentences from there to where the text says it (all its words) next (`ahead`) and where it said it last
(`behind`), each as 1 / (1 + sentences), 0 beyond NEAR_SENTENCES or with no anchor.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from core.cnl.plain_sentences import split_sentences
from core.text.words import ARTICLES, POSSESSIVES

# Sentences on either side of the previous answer's sentence a referent is looked for in
# (budget: a referent said further away has nearness 0).
NEAR_SENTENCES = 6
_WORD = re.compile(r"[a-z0-9']+")


@lru_cache(maxsize=4)
def _sentence_words(document: str) -> tuple[frozenset[str], ...]:
    """Each sentence of the document as its set of lower-cased words (one document is read for
    every pronoun group of a question, and by every turn of a conversation)."""
    return tuple(frozenset(_words(s.text)) for s in split_sentences(document))


def _words(text: str) -> list[str]:
    """Lower-cased words, a possessive's "'s" cut ("Farina's" says Farina)."""
    return [w.removesuffix("'s") for w in _WORD.findall(text.lower())]


@dataclass(frozen=True)
class Passage:
    """A document's sentences as word sets, and where the previous answer stands among them."""

    sentences: tuple[frozenset[str], ...]
    # The previous answer's sentence, None when there is no document or no answer to place.
    at: int | None

    @classmethod
    def of(cls, document: str, answer: str) -> Passage:
        """The document's sentences and the one sharing the most words with `answer` (the first of
        a tie: a text is read in order)."""
        said = frozenset(_words(answer))
        sentences = _sentence_words(document) if document.strip() and said else ()
        overlap = [len(said & s) for s in sentences]
        best = max(overlap, default=0)
        return cls(sentences, overlap.index(best) if best else None)

    def nearness(self, mention: str) -> tuple[float, float]:
        """(ahead, behind): 1 / (1 + sentences) from the anchor to the nearest sentence at or after
        it that says `mention` (all its words but articles and possessives: "Anna Berg" is not
        said by "Ruth Berg"), and to the nearest before it; 0 when none within NEAR_SENTENCES."""
        words = frozenset(_words(mention)) - ARTICLES - POSSESSIVES
        if self.at is None or not words:
            return 0.0, 0.0
        ahead = next((d for d in range(NEAR_SENTENCES + 1) if self._says(self.at + d, words)), None)
        behind = next((d for d in range(1, NEAR_SENTENCES + 1) if self._says(self.at - d, words)), None)
        return (
            1.0 / (1 + ahead) if ahead is not None else 0.0,
            1.0 / (1 + behind) if behind is not None else 0.0,
        )

    def _says(self, index: int, words: frozenset[str]) -> bool:
        return 0 <= index < len(self.sentences) and words <= self.sentences[index]


NOWHERE = Passage((), None)
