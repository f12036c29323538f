"""Token-budget packing (seed 001 §3): the longest ranked prefix whose estimated cost fits B."""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")

# Characters per token by script (seed 001): CJK 1.6, Cyrillic/Arabic/Hebrew 2.5, anything else 4.0.
_CJK = ("CJK", "HIRAGANA", "KATAKANA", "HANGUL")
_MIDDLE = ("CYRILLIC", "ARABIC", "HEBREW")


def chars_per_token(text: str) -> float:
    """χ(t) from the script most of the text's letters are written in."""
    counts = {1.6: 0, 2.5: 0, 4.0: 0}
    for char in text:
        if not char.isalpha():
            continue
        name = unicodedata.name(char, "")
        key = 1.6 if name.startswith(_CJK) else 2.5 if name.startswith(_MIDDLE) else 4.0
        counts[key] += 1
    best = max(counts.values())
    # Ties (and text with no letters) fall to the cheapest estimate last: 4.0, then 2.5, then 1.6.
    return next(chi for chi in (4.0, 2.5, 1.6) if counts[chi] == best)


def estimate_tokens(text: str) -> int:
    """⌈|t| / χ(t)⌉ with |t| in characters."""
    return math.ceil(len(text) / chars_per_token(text)) if text else 0


@dataclass(frozen=True)
class Packed(Generic[T]):
    """What `pack` kept within its budget, in rank order, what it left out, and the kept items' cost."""

    kept: tuple[T, ...]
    left_out: tuple[T, ...]
    cost: int
    budget: int


def pack(ranked: Sequence[T], budget: int, cost: Callable[[T], int]) -> Packed[T]:
    """The longest prefix of `ranked` whose summed cost is ≤ budget; the rest is left out, in order.

    Rank order is fixed, so prefix acceptance is the policy: a cheap item after one that does not
    fit is left out too (seed 001: "preserve rank order while honoring a hard prompt cap")."""
    total = 0
    for index, item in enumerate(ranked):
        price = cost(item)
        if total + price > budget:
            return Packed(tuple(ranked[:index]), tuple(ranked[index:]), total, budget)
        total += price
    return Packed(tuple(ranked), (), total, budget)
