"""Source text as every reader numbers it: lines split as editors split them, and tokens that
remember where they start.

Apart from the validator (core/cnl/validate.py) so that what only splits lines or carries
positions (Intent CNL, the passage splitter) does not import it and the permission readers it
brings: a warm `mrptui ask` formats Intent CNL and splits passages but validates no unit (issue 41).
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple


class Token(NamedTuple):
    """A piece of source text and where it starts (1-based line and column)."""

    text: str
    line: int
    col: int


# `token((text, line, col))`: a Token without NamedTuple's Python-level __new__, for the
# readers' per-line hot path (several tokens per line of every unit).
token = partial(tuple.__new__, Token)


def source_lines(text: str) -> list[str]:
    """Lines as editors number them: split at line feeds only (not at the other characters that
    `str.splitlines` treats as breaks), with a trailing carriage return removed."""
    lines = text.split("\n")
    return [line.removesuffix("\r") for line in lines] if "\r" in text else lines
