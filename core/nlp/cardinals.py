"""English cardinal numbers written out in words ("eight", "twenty-five", "a dozen", "two hundred").

The words come from the number grammar of English, not from a list of any document: the units
one to nine, the irregular teens, the tens, and the multipliers. That class is closed (no new
cardinal word enters the language), which is why it is written out here rather than derived: the
treebank tags every one of these NUM where it has them but lacks some ("forty", "seventy",
"thirteen"), and the lexicon's "kind of integer" class lets in "grand", "gross", "ternary" and
the Roman numerals "x" and "l" (docs/decisions.md, "Cardinal words").
"""

from __future__ import annotations

from core.text.words import CARDINAL_TEENS, CARDINAL_TENS, CARDINAL_UNITS

# Multipliers: "two hundred", "a dozen" (twelve of what follows).
_SCALES = {"dozen": 12, "hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9, "trillion": 10**12}

VALUES: dict[str, int] = {
    "zero": 0,
    **{word: i + 1 for i, word in enumerate(CARDINAL_UNITS)},
    **{word: i + 10 for i, word in enumerate(CARDINAL_TEENS)},
    **{word: (i + 2) * 10 for i, word in enumerate(CARDINAL_TENS)},
    **_SCALES,
}
CARDINALS = frozenset(VALUES)
SCALES = frozenset(_SCALES)
TENS = frozenset(CARDINAL_TENS)


def cardinal_value(word: str) -> int | None:
    """The value of one cardinal word ("Eight" → 8), or of a hyphenated ten and unit
    ("twenty-five" → 25); None for anything else."""
    lower = word.lower()
    if lower in VALUES:
        return VALUES[lower]
    tens, _, unit = lower.partition("-")
    if tens in TENS and unit in CARDINAL_UNITS:
        return VALUES[tens] + VALUES[unit]
    return None


def is_cardinal(word: str) -> bool:
    return cardinal_value(word) is not None
