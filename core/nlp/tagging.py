"""Words of a sentence with their universal part-of-speech tags (UPOS) and character offsets.

Answers tag only the question and the few sentences they read, at answer time, with the trained
tagger of core/nlp (its word split: clitics, hyphens and punctuation apart), unless the index
store already holds the sentence's tags (core/nlp/tag_store.py); the offsets let a lead be quoted
exactly as the sentence writes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from core.nlp.tag_store import recall, remember
from core.nlp.tagger import split_words, tag


@dataclass(frozen=True)
class Token:
    word: str
    tag: str
    start: int
    end: int


@lru_cache(maxsize=4096)
def tag_text(text: str) -> tuple[Token, ...]:
    """The text's words, tagged; cached, since one answer reads an evidence sentence several times
    (ranked, read, checked again by the validator). The question's own are tagged once, on its
    Question (core/question). Tags the index store keeps (core/nlp/tag_store.py) are read instead of
    tagging again."""
    words = split_words(text)
    tags = recall(text)
    if tags is None or len(tags) != len(words):
        tags = tag(words)
        remember(text, tags)
    tokens, at = [], 0
    for word, upos in zip(words, tags):
        start = text.find(word, at)
        if start < 0:
            start = at
        at = start + len(word)
        tokens.append(Token(word, upos, start, at))
    return tuple(tokens)
