"""A memory record: one earlier turn, a note the user pinned, or a summary of compacted turns."""

from __future__ import annotations

import hashlib
import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from core.units import Caller

Scope = Literal["session", "user", "global"]
Kind = Literal["turn", "note", "summary"]

# A record's text fields are bounded so a memory file cannot carry a KB's worth of text.
MAX_TEXT_CHARS = 4_000


class MemoryRecord(BaseModel):
    """`caller` is the digest of the caller that made the record (`caller_digest`); a record is read
    back only for that caller. `unit_ids` are the units the turn cited and `unit_digests` the
    content digest of each as the turn saw it (core/memory/cited.py): the record is reused only
    while every one of them is in the reading caller's view with that digest."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1, max_length=80)
    scope: Scope
    kind: Kind
    caller: str = Field(min_length=1, max_length=80)
    conversation: str = Field(default="", max_length=200)
    ts: float = Field(ge=0, allow_inf_nan=False)
    turn: int = Field(default=0, ge=0)
    question: str = Field(default="", max_length=MAX_TEXT_CHARS)
    lead: str = Field(default="", max_length=MAX_TEXT_CHARS)
    # What the turn was about ("Orion"): what a later "it" or "and Helix?" refers back to.
    entity: str = Field(default="", max_length=200)
    unit_ids: tuple[str, ...] = ()
    # Records written before digests were kept have none: they fail the check (fail closed).
    unit_digests: tuple[str, ...] = ()
    # Summaries only: the turns they replace, and the extractive summary's confidence.
    source_ids: tuple[str, ...] = ()
    confidence: float = Field(default=1.0, ge=0, le=1)

    @property
    def decay_rate(self) -> float:
        return 1.0 - self.confidence

    @property
    def text(self) -> str:
        """What similarity is measured against and what a prompt quotes."""
        return f"{self.question} {self.lead}".strip()


def caller_digest(caller: Caller) -> str:
    """A stable digest of who asks (tags and region; not the as-of date: the same person asking on
    another day is the same caller), so memory files never store the tags themselves."""
    # JSON, not a joined string: a tag holding the separator must not make two callers one.
    text = json.dumps([sorted(caller.tags), caller.region], ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def record_id(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()[:16]
