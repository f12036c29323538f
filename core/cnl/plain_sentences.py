"""Plain text's paragraphs and sentences: where one ends and at which line and column it starts.

The rule is the plain-text reader's (core/cnl/plaintext.py docstring, "Sentences end at"); a
bulleted line starts a sentence of its own. Apart from the reader so that what only splits
sentences (the answer's passages, every warm `mrptui ask`) does not import the unit validator
and the permission readers (issue 41).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator

from core.cnl.plain_facts import fact_triple
from core.cnl.source_text import Token, source_lines
from core.text.sentences import period_continues
from core.text.words import GOES_ON

BULLET = re.compile(r"\s*(?:[-*+\u2022]|\d+[.)])\s+")
# A run of . ! ? not followed by whitespace fails from its first mark, and so from every later
# one: starting only at a run's first mark, without backtracking, keeps that linear.
_END = re.compile(r"(?<![.!?])[.!?]++[\"')\]\u2019\u201d]*+(?=\s|$)")
_NEXT_CHAR = re.compile(r"\s*(\S?)")
# CommonMark ATX heading: up to three spaces, one to six `#`, then a space or the line's end.
_ATX_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
_MAX_INLINE_HEADING_WORDS = 8


def split_sentences(text: str) -> list[Token]:
    """The sentences of `text` (whitespace collapsed) with the line and column where each starts."""
    return [sentence for paragraph in split_paragraphs(source_lines(text)) for sentence in sentences_of(paragraph)]


def split_paragraphs(lines: list[str]) -> Iterator[list[tuple[int, str]]]:
    """Numbered lines grouped into paragraphs: blank lines and Markdown headings end one."""
    paragraph: list[tuple[int, str]] = []
    for number, line in enumerate(lines, start=1):
        if _ATX_HEADING.match(line):
            # A Markdown heading is a block of its own even with no blank line around it, so
            # it titles the text below instead of being read as that text's first sentence.
            if paragraph:
                yield from _split_heading(paragraph)
            yield [(number, line)]
            paragraph = []
        elif line.strip():
            paragraph.append((number, line))
        elif paragraph:
            yield from _split_heading(paragraph)
            paragraph = []
    if paragraph:
        yield from _split_heading(paragraph)


def _split_heading(paragraph: list[tuple[int, str]]) -> Iterator[list[tuple[int, str]]]:
    """A paragraph whose first line is a heading written straight above its text ("Power cuts" /
    "During a power cut the …") is that heading, then the text: otherwise the heading is read as
    the first words of the first sentence, and quoted with it."""
    if len(paragraph) > 1 and _heads_text(paragraph[0][1], paragraph[1][1]):
        yield paragraph[:1]
        yield paragraph[1:]
    else:
        yield paragraph


def _heads_text(line: str, next_line: str) -> bool:
    """A title-shaped first line: a few words from a capital or digit, no sentence or clause end,
    not ending on a word a wrapped sentence would go on from, not a fact; and the next line starts
    a sentence or a list item. Stricter than a one-line paragraph's heading: no blank line confirms it."""
    words, following = line.split(), next_line.lstrip()
    starts_text = following[:1].isupper() or BULLET.match(next_line) is not None
    if not words or len(words) > _MAX_INLINE_HEADING_WORDS or not starts_text:
        return False
    return (
        (line.lstrip()[0].isupper() or line.lstrip()[0].isdigit())
        and not words[-1].endswith((".", "!", "?", ",", ";"))
        and words[-1].lower().strip(":") not in GOES_ON
        and fact_triple(line.strip()) is None
    )


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
