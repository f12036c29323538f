"""Searching the KB screen's units: inline for a small view, in a worker thread for a large one.

Matching reads each unit's text, and a unit of a stored KB is restored to be read (about 40 µs):
a million units take most of a minute, which must not hold the UI thread. Both paths run the
same chunked loop; the worker reports progress per chunk and stops when cancelled.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

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
