"""What a memory record cites: each unit's id with the digest of the content the turn was shown.

A record quotes what its caller was told (the question as resolved, the answer's lead). That is
reused only while every cited unit is still in the caller's view **and** still says what it said:
a unit edited since, or restricted, withdrawn or out of effect since, withholds the record, and the
caller is told so (`Checker.reason`). A unit gone from the view reads the same whether it was
deleted or restricted, as everywhere (docs/security.md).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Protocol

from core.units import KnowledgeUnit

# The digest a record holds for a unit whose content it could not pin (recorded from a view that
# was not the run's, or before records carried digests): it matches nothing, so fails closed.
UNPINNED = ""


class CitedView(Protocol):
    """What re-checking needs of a caller's view: its unit of an id, None when not in it."""

    def get(self, unit_id: str) -> KnowledgeUnit | None: ...


def content_digest(unit: KnowledgeUnit) -> str:
    """The unit's content and permissions, not where it is written: a line added above it in its
    file keeps the digest, any edit of its fields changes it."""
    data = unit.model_dump_json(exclude={"location"}).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def cited_digests(view: CitedView | None, unit_ids: Sequence[str], pinned: bool = True) -> tuple[str, ...]:
    """The content digest of each cited unit in `view` (`UNPINNED` when absent, or for all of them
    when not `pinned` or no view: the view is not the one the turn was answered from)."""
    units = [view.get(unit_id) if pinned and view is not None else None for unit_id in unit_ids]
    return tuple(content_digest(unit) if unit is not None else UNPINNED for unit in units)


def merged(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Cited (id, digest) pairs of several records as one: an id cited with two different digests
    (edited between the turns) is unpinned, since the records quote both versions."""
    out: dict[str, str] = {}
    for unit_id, digest in pairs:
        out[unit_id] = digest if out.get(unit_id, digest) == digest else UNPINNED
    return out


class Checker:
    """Re-checks records against one view, computing each unit's digest once."""

    def __init__(self, view: CitedView | None):
        self.view = view
        self._digests: dict[str, str | None] = {}

    def _digest(self, unit_id: str) -> str | None:
        if unit_id not in self._digests:
            unit = self.view.get(unit_id) if self.view is not None else None
            self._digests[unit_id] = content_digest(unit) if unit is not None else None
        return self._digests[unit_id]

    def reason(self, unit_ids: Sequence[str], digests: Sequence[str]) -> str | None:
        """Why a record citing these units may not be reused now, or None when it may."""
        for index, unit_id in enumerate(unit_ids):
            now = self._digest(unit_id)
            if now is None:
                # Unnamed: an id outside the view is not shown, even to a caller who saw it once.
                return "a unit it cited is no longer in your view"
            recorded = digests[index] if index < len(digests) else UNPINNED
            if recorded == UNPINNED:
                return f"{unit_id} cannot be checked (its content was not recorded)"
            if recorded != now:
                return f"{unit_id} has changed since"
        return None


def withheld_note(kind: str, turn: int, reason: str) -> str:
    """What the caller is told about a record that was not reused: `turn 2 not used: … changed since`."""
    return f"{where(kind, turn)} not used: {reason}"


def where(kind: str, turn: int) -> str:
    """How the caller is told which record: `turn 3`, `note`, `summary up to turn 6`."""
    return {"turn": f"turn {turn}", "summary": f"summary up to turn {turn}"}.get(kind, kind)


class Offered(Protocol):
    # Read-only, so frozen records and requests (MemoryRecord, MemoryUse) are offered as they are.
    @property
    def kind(self) -> str: ...

    @property
    def turn(self) -> int: ...

    @property
    def unit_ids(self) -> tuple[str, ...]: ...

    @property
    def unit_digests(self) -> tuple[str, ...]: ...


def usable(memory: Sequence[Offered], view: CitedView | None) -> tuple[list, list[str]]:
    """The records (`MemoryRecord`s, or the `MemoryUse`s offered to a plugin: a re-run reuses its
    request after a reload) that may be reused in `view` (None: a view of nothing), and a line for
    each one withheld (`turn 2 not used: orion::… has changed since`)."""
    check = Checker(view)
    kept, withheld = [], []
    for record in memory:
        reason = check.reason(record.unit_ids, record.unit_digests) if record.unit_ids else None
        if reason is None:
            kept.append(record)
        else:
            withheld.append(withheld_note(record.kind, record.turn, reason))
    return kept, withheld
