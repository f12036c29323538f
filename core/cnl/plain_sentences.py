"""Plain text's sentences: where one ends and at which line and column it starts.

The rule is the plain-text reader's (core/cnl/plaintext.py docstring, "Sentences end at"); a
bulleted line starts a sentence of its own.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator

from core.cnl.validate import Token
from core.text.sentences import period_continues

BULLET = re.compile(r"\s*(?:[-*+\u2022]|\d+[.)])\s+")
# A run of . ! ? not followed by whitespace fails from its first mark, and so from every later
# one: starting only at a run's first mark, without backtracking, keeps that linear.
_END = re.compile(r"(?<![.!?])[.!?]++[\"')\]\u2019\u201d]*+(?=\s|$)")
_NEXT_CHAR = re.compile(r"\s*(\S?)")


def sentences_of(paragraph: list[tuple[int, str]]) -> list[Token]:
    sentences: list[Token] = []
    for block in _blocks(paragraph):
        sentences.extend(_split_block(block))
    return sentences


def _blocks(paragraph: list[tuple[int, str]]) -> list[list[Token]]:
    """Runs of lines that sentences may span: a bulleted line starts a new run, marker removed."""
    blocks: list[list[Token]] = []
    for number, line in paragraph:
        bullet = BULLET.match(line)
        if bullet or not blocks:
            start = bullet.end() if bullet else 0
            blocks.append([Token(line[start:], number, start + 1)])
        else:
            blocks[-1].append(Token(line, number, 1))
    return blocks


def _split_block(block: list[Token]) -> Iterator[Token]:
    text = "\n".join(line.text for line in block)
    starts = []
    offset = 0
    for line in block:
        starts.append(offset)
        offset += len(line.text) + 1

    def located(begin: int, end: int) -> Token | None:
        piece = text[begin:end]
        words = piece.split()
        if not words:
            return None
        first = begin + len(piece) - len(piece.lstrip())
        row = bisect_right(starts, first) - 1
        return Token(" ".join(words), block[row].line, block[row].col + first - starts[row])

    begin = 0
    for match in _END.finditer(text):
        if _is_boundary(text, match):
            sentence = located(begin, match.end())
            if sentence:
                yield sentence
            begin = match.end()
    rest = located(begin, len(text))
    if rest:
        yield rest


def _is_boundary(text: str, match: re.Match[str]) -> bool:
    next_char = _NEXT_CHAR.match(text, match.end())
    assert next_char is not None  # every group may be empty
    following = next_char.group(1)
    if following.islower():
        return False
    return not (match.group().startswith(".") and period_continues(text, match.start(), following))
