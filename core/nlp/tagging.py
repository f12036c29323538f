"""Words of a sentence with their universal part-of-speech tags (UPOS) and character offsets.

Answers tag only the question and the few sentences they read, at answer time, with the trained
tagger of core/nlp (its word split: clitics, hyphens and punctuation apart), unless the index
store already holds the sentence's tags (core/nlp/tag_store.py); the offsets let a lead be quoted
exactly as the sentence writes it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import overload

from core.nlp.tag_store import recall, remember
from core.nlp.tagger import split_words, tag


@dataclass(frozen=True)
class Token:
    """A word of tagged text, its part-of-speech tag and its character offsets."""

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


class TaggedOnRead(Sequence[Token]):
    """`tag_text(text)`, tagged when a token is first read: a check that reads only the words
    (`words_of`) never tags. The support check of a quoted answer (core/answer/quote_check.py,
    `checked`) reads tags only for a term the words leave unsaid, and its quote was about half
    the words tagged on first sight in an `ask` at 100k units."""

    __slots__ = ("text", "words")

    def __init__(self, text: str) -> None:
        self.text = text
        self.words = tuple(split_words(text))  # `tag_text` gives one token per word, in order

    def __len__(self) -> int:
        return len(self.words)

    @overload
    def __getitem__(self, index: int) -> Token: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Token]: ...
    def __getitem__(self, index: int | slice) -> Token | Sequence[Token]:
        return tag_text(self.text)[index]

    def __iter__(self) -> Iterator[Token]:
        return iter(tag_text(self.text))


def words_of(tokens: Sequence[Token]) -> Sequence[str]:
    """The tokens' words, without tagging a `TaggedOnRead`."""
    return tokens.words if isinstance(tokens, TaggedOnRead) else [t.word for t in tokens]
