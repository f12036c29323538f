"""The trailing question block of a plain-text file: what the text should answer, not evidence.

The rules are the first item of core/cnl/plaintext.py's docstring; `evidence_lines` is the text
without the block, `question_lines` how many lines the block holds (`mrptui ingest` says so).
"""

from __future__ import annotations

import re

from core.cnl.source_text import source_lines

# Possessive where two whitespace runs meet (`\s*` `:?` `\s*`): retrying every split of a long run
# that is not at the line's end is quadratic.
_QUESTIONS = re.compile(r"\s*(?:#+\s*)?questions\s*+:?\s*$", re.IGNORECASE)
_QUESTION_WORD = re.compile(r"\bquestions?\b", re.IGNORECASE)
# A question block's heading is a title, not a paragraph: a few words and an instruction at most.
_MAX_HEADING_WORDS = 16
_HEADING_LEAD_WORDS = 3
_Q_LABEL = re.compile(r"\s*q(?:uestion)?\s*[-\u2013]?\s*\d+\s*[:.)\-\u2013\u2014]", re.IGNORECASE)
# Any list label a question list is written with: `Q3:`, `Q-3.`, `Question 3 -`, `3.`, `3)`,
# `(c)`, `c)`, `(iii)`, `[3]` or a bullet.
_QUESTION_LINE = re.compile(
    r"\s*(?:q(?:uestion)?\s*[-\u2013]?\s*\d+\s*[:.)\-\u2013\u2014]|\d+\s*[.):]|\(\s*(?:\d+|[a-z]|[ivx]+)\s*\)"
    r"|\[\s*(?:\d+|[a-z])\s*\]|[a-z]\)|[-*+\u2022])\s*\S",
    re.IGNORECASE,
)
# An FAQ's answer line: a question block is never followed by one.
ANSWER_LABEL = re.compile(r"\s*(?:a|answer)\s*\d*\s*:[ \t]*(?=\S)", re.IGNORECASE)


def evidence_lines(text: str) -> list[str]:
    lines = source_lines(text)
    start = question_block(lines)
    return lines if start is None else lines[:start]


def question_block(lines: list[str]) -> int | None:
    """The index of the first line of the trailing question block (its heading, if it has one),
    or None when there is none."""
    found = _trailing_block(lines)
    return None if found is None else found[0]


def question_lines(text: str) -> int:
    """How many non-blank lines the trailing question block holds, its heading excluded."""
    lines = source_lines(text)
    found = _trailing_block(lines)
    return 0 if found is None else sum(1 for line in lines[found[1] :] if line.strip())


def _trailing_block(lines: list[str]) -> tuple[int, int] | None:
    """(first line of the block, first line after its heading)."""
    for index, line in enumerate(lines):
        if _QUESTIONS.fullmatch(line) and not any(ANSWER_LABEL.match(later) for later in lines[index + 1 :]):
            return index, index + 1
    # The block is trailing, so its heading is the last heading-shaped line followed only by
    # questions; scanning from the end stops at the first line that is neither.
    first_question = len(lines)
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index]
        if not line.strip() or _is_question_line(line):
            first_question = index if line.strip() else first_question
            continue
        starts_paragraph = index == 0 or not lines[index - 1].strip()
        if starts_paragraph and _is_question_heading(line) and _reads_as_questions(lines[index + 1 :]):
            return index, index + 1
        break
    return _headless(lines, first_question)


def _headless(lines: list[str], start: int) -> tuple[int, int] | None:
    """A block whose heading (if any) does not name questions: at least two labelled lines (see
    `_QUESTION_LINE`), at least half of them asking, after a blank line or under a title-shaped
    line that starts a paragraph ("QUERIES FROM THE INQUIRY", "Points to confirm:"). A numbered
    list of statements, one question, or a list a prose sentence introduces stays text."""
    block = [line for line in lines[start:] if line.strip()]
    if len(block) < 2 or not all(_QUESTION_LINE.match(line) for line in block) or not _reads_as_questions(block):
        return None
    if 0 < start < len(lines) and not lines[start - 1].strip():
        return start, start
    title = start - 1
    starts_paragraph = title == 0 or (title > 0 and not lines[title - 1].strip())
    return (title, start) if title >= 0 and starts_paragraph and _is_title(lines[title]) else None


def _is_title(line: str) -> bool:
    """Short and not a sentence: no final `.`, `!` or `?` (a trailing colon is a title's)."""
    words = line.strip().lstrip("#").split()
    return 0 < len(words) <= _MAX_HEADING_WORDS and not words[-1].endswith((".", "!", "?"))


def _is_question_line(line: str) -> bool:
    return "?" in line or _QUESTION_LINE.match(line) is not None


def _reads_as_questions(lines: list[str]) -> bool:
    """At least half the lines ask (a `?` or a `Q<n>` label): a numbered list of statements under
    "The question of ownership" is evidence; "4. List the causes." among questions is not."""
    filled = [line for line in lines if line.strip()]
    asking = sum(1 for line in filled if "?" in line or _Q_LABEL.match(line))
    return bool(filled) and 2 * asking >= len(filled)


def _is_question_heading(line: str) -> bool:
    """A title naming questions early ("Questions — …", "Review questions", "Questions for the
    reader"); "She asked the question that …" names it too late to be a title."""
    words = line.strip().lstrip("#").split()
    lead = " ".join(words[:_HEADING_LEAD_WORDS])
    return bool(_QUESTION_WORD.search(lead)) and len(words) <= _MAX_HEADING_WORDS and not words[-1].endswith("?")
