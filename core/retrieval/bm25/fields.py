"""What each BM25 field of a unit says, and its tokens: one definition for the index build
(core/retrieval/bm25/index.py), the index store's segments, token tables and block re-reads
(core/store/) and HDC's token fields."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from core.text.tokenizer import tokenize
from core.units import KnowledgeUnit

FIELDS: tuple[str, ...] = ("topic", "claim", "procedure", "utilityActs", "utilityNote", "condition", "role")


def field_texts(unit: KnowledgeUnit) -> tuple[str, ...]:
    """The text of each field in `FIELDS` order; absent fields are empty strings."""
    return (
        unit.topic,
        unit.claim or "",
        unit.procedure or "",
        " ".join(unit.acts),
        unit.utility_note or "",
        unit.condition or "",
        # A StrEnum's `str` is its value, without the Python-level `value` property (a segment
        # build asks this of every unit).
        str(unit.role),
    )


def field_tokens(unit: KnowledgeUnit) -> tuple[Sequence[str], ...]:
    topic, claim, procedure, acts, note, condition, role = field_texts(unit)
    return (
        tokenize(topic),
        _text_tokens(claim),
        _text_tokens(procedure),
        _label_tokens(acts),
        _text_tokens(note),
        _text_tokens(condition),
        _label_tokens(role),
    )


def _text_tokens(text: str) -> Sequence[str]:
    return tokenize(text) if text else ()


@lru_cache(maxsize=1024)
def _label_tokens(label: str) -> tuple[str, ...]:
    """Role names and act lists repeat across units, so each distinct one is tokenised once."""
    return tuple(tokenize(label))
