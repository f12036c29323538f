"""A stored BM25 index's vocabulary, looked up without a dict.

A cold view's first question scores per-file parts (core/retrieval/bm25/parts.py): at a million
units that is 200 parts of ~30k words each, and a question needs a handful of them. Reading each
part's words into a list and a word -> id dict cost ~1.6 GB and ~4 CPU s for those few lookups.
Instead a part keeps its words as the stored text, one JSON string a line in term-id order, and
finds a word with two C loops over it: the word's line (`bytes.find`) and the lines before it
(`bytes.count`), ~0.1 ms per word and part.

The text is a JSON array, one item a line: `[`, then `"w0",`, `"w1",` … and `"wn"`, then `]`.
JSON escapes a newline inside a string, so a raw newline only ever ends a line; and a line
starting with the word's own encoding can only be that word (an unescaped quote closes a string).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from json.encoder import encode_basestring_ascii


def encode(words: Sequence[str]) -> bytes:
    """The stored text of `words` (what `WordList` reads; `json.loads` gives the list back)."""
    if not words:
        return b"[]"
    return b"[\n" + ",\n".join(map(encode_basestring_ascii, words)).encode("ascii") + b"\n]"


class WordList:
    """Term ids of a vocabulary stored by `encode`, one lookup at a time."""

    def __init__(self, text: bytes, count: int):
        lines = text.count(b"\n")
        if not (
            text == b"[]" if count == 0 else text.startswith(b"[\n") and text.endswith(b"\n]") and lines == count + 1
        ):
            raise ValueError(f"not a list of {count} words")
        self._text = text
        self._count = count

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[str]:
        return iter(self.words())

    def __contains__(self, term: str) -> bool:
        return self.get(term) is not None

    def __getitem__(self, term: str) -> int:
        found = self.get(term)
        if found is None:
            raise KeyError(term)
        return found

    def get(self, term: str) -> int | None:
        """The id of `term` (its line number), None when the vocabulary lacks it."""
        at = self._text.find(b"\n" + encode_basestring_ascii(term).encode("ascii"))
        return None if at < 0 else self._text.count(b"\n", 0, at)

    def words(self) -> list[str]:
        """Every word in term-id order (a merge or a subset reads them all)."""
        words = json.loads(self._text)
        if len(words) != self._count:
            raise ValueError("word list length")
        return words
