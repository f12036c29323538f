"""Searching the KB screen's units: inline for a small view, in a worker thread for a large one.

Matching reads each unit's text, and a unit of a stored KB is restored to be read (about 40 µs):
a million units take most of a minute, which must not hold the UI thread. Both paths run the
same chunked loop; the worker reports progress per chunk and stops when cancelled.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from core.infra.picked import Picked
from core.units import KnowledgeUnit

# Views up to this size are searched on the spot (a few milliseconds), so results are immediate.
INLINE_UNITS = 5_000
CHUNK_UNITS = 2_000


def unit_matches(unit: KnowledgeUnit, needle: str) -> bool:
    needle = needle.lower()
    fields = [
        unit.id,
        unit.topic,
        unit.body,
        unit.role.value,
        unit.title or "",
        unit.subject or "",
        unit.relation.value if unit.relation else "",
        unit.object or "",
    ]
    return any(needle in value.lower() for value in fields)


def search_chunks(units: Sequence[KnowledgeUnit], needle: str) -> Iterator[tuple[list[int], int]]:
    """Positions of matching units, one chunk at a time, each with how many units are searched so
    far. A view's units are read with `peek`, so a search keeps none of them restored: holding
    every unit of a million-unit view would take gigabytes."""
    read = getattr(units, "peek", units.__getitem__)
    for start in range(0, len(units), CHUNK_UNITS):
        stop = min(start + CHUNK_UNITS, len(units))
        yield [p for p in range(start, stop) if unit_matches(read(p), needle)], stop


def search_all(units: Sequence[KnowledgeUnit], needle: str, heard: Callable[[list[int], int], bool]) -> bool:
    """Run the search, handing each chunk's hits to `heard`; it returns False to stop. True when done."""
    return all(heard(hits, done) for hits, done in search_chunks(units, needle))


@dataclass
class UnitSearch:
    """One search of the screen's view: its text, the hits found so far (positions in `units`),
    and what the table shows of them: every unit with the matches marked, or the matches alone
    (`filtered`). `matches` are positions in `shown`; `position` is the match the cursor is on."""

    units: Sequence[KnowledgeUnit] = ()
    text: str = ""
    filtered: bool = False
    hits: list[int] = field(default_factory=list)
    searched: int = 0  # how many units the search has read
    shown: Sequence[KnowledgeUnit] = ()
    matches: list[int] = field(default_factory=list)
    position: int = -1

    def restart(self) -> None:
        """Search anew (the text or the units changed): nothing found or read yet."""
        self.hits, self.searched = [], 0
        self.recompute()

    def add(self, hits: list[int], done: int) -> None:
        self.hits += hits
        self.searched = done

    @property
    def done(self) -> bool:
        return self.searched == len(self.units)

    def recompute(self) -> None:
        """`shown` and `matches` from the hits so far."""
        if self.text and self.filtered:
            self.shown = Picked(self.units, self.hits)
            self.matches = list(range(len(self.hits)))
        else:
            self.shown = self.units
            self.matches = list(self.hits)
        if self.position >= len(self.matches):
            self.position = len(self.matches) - 1

    def step(self, to: int) -> int:
        """Move to match `to` (wrapping); the row in `shown` it is on."""
        self.position = to % len(self.matches)
        return self.matches[self.position]

    def summary(self) -> str:
        """The title's part: where the cursor is among the matches, and how far the search got."""
        where = f"{self.position + 1} of {len(self.matches)}" if self.matches else "no matches"
        if self.searched < len(self.units):
            where += f" so far ({self.searched:,} of {len(self.units):,} searched)"
        return where + (" (filtered)" if self.filtered else "")
