"""Where a written sentence ends: a period after an abbreviation or an initial does not end one.

Shared by the plain-text reader (KB sentences) and the question splitter (sub-questions), so
"What do the strains of Y. pestis suggest?" is one question and one sentence in both.
"""

from __future__ import annotations

import re

ABBREVIATIONS = frozenset(
    "mr. mrs. ms. dr. prof. sr. jr. st. vs. e.g. i.e. cf. approx. no. nos. fig. figs. inc. ltd. co. "
    "corp. dept. est. al. ca. vol. pp. ed. eds. jan. feb. mar. apr. jun. jul. aug. sep. sept. oct. "
    "nov. dec.".split()
)
# Abbreviations that stand before a number ("No. 5", "nos. 3 and 4"): before a word, "No." is the
# answer word ending its sentence ("Can I park here? No. The bay is reserved.").
_BEFORE_NUMBERS = frozenset(("no.", "nos."))
_INITIALS = re.compile(r"(?:[A-Za-z]\.)+")
_OPENING_MARKS = "\"'([\u2018\u201c"
# Abbreviations are short, so a small window before the period holds the whole word.
_WINDOW = 48


def period_continues(text: str, period: int, following: str) -> bool:
    """The period at `text[period]` belongs to an abbreviation ("e.g.", "Dr.") or to initials
    ("U.S.", "John F. Kennedy", "Y. pestis") instead of ending the sentence; `following` is the
    first non-space character after it ("" at the end)."""
    window = text[max(0, period - _WINDOW) : period + 1].split()
    if not window:
        return False
    word = window[-1].lstrip(_OPENING_MARKS)
    if word.lower() in ABBREVIATIONS:
        return word.lower() not in _BEFORE_NUMBERS or following[:1].isdigit()
    if not _INITIALS.fullmatch(word):
        return False
    # "U.S." is an abbreviation and "John F. Kennedy" an initial inside a name, but in "A uses B.
    # B provides C." a lone letter after a lowercase word ends the sentence, unless the next word
    # is lowercase ("the strains of Y. pestis").
    previous = window[-2] if len(window) > 1 else ""
    return len(word) > 2 or not previous[:1].islower() or following.islower()
