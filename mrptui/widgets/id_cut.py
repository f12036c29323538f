"""Ids cut to a column's width, never two alike: the shortest form unique within the table.

A column of ids that must give way loses their middle (`orion-s…unit-007`), where ids of one KB
are alike. When that makes two ids read the same (`mdba::c…unit-000` for chunk 012 and chunk 013),
the cut moves: the ellipsis slides towards the end where the ids agree, keeping the part that tells
them apart (`mdba::chunk-012::…`); only when no cut of that width tells every id apart does the
column widen, up to the whole ids.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len

ELLIPSIS = "…"
# Past this many distinct ids a table keeps the even cut without the search (a KB view of 100k
# units: its ids are checked for clashes only in the rows drawn).
SEARCH_LIMIT = 20_000


@dataclass(frozen=True)
class IdCut:
    """Keep `head` characters, an ellipsis and `tail` characters of an id longer than the width."""

    head: int
    tail: int

    @property
    def width(self) -> int:
        return self.head + 1 + self.tail

    def apply(self, ident: str) -> str:
        if cell_len(ident) <= self.width:
            return ident
        return ident[: self.head] + ELLIPSIS + (ident[len(ident) - self.tail :] if self.tail else "")


def even(width: int) -> IdCut:
    head = (width - 1) // 2
    return IdCut(head, width - 1 - head)


def unique(ids: Sequence[str], cut: IdCut) -> bool:
    distinct = set(ids)
    return len({cut.apply(ident) for ident in distinct}) == len(distinct)


def _head_needed(ids: set[str], tail: int, width: int) -> int:
    """The fewest head characters that tell apart every two ids cut with `tail` characters kept
    (ids no longer than the width they end up in are shown whole)."""
    groups: dict[str, list[str]] = defaultdict(list)
    for ident in ids:
        groups[ident[len(ident) - tail :] if tail else ""].append(ident)
    needed = 0
    for group in groups.values():
        group.sort()
        for left, right in zip(group, group[1:]):
            # Most neighbours already differ within the head needed so far: one slice compare
            # tells (an evidence refill cuts its ids twice, this was a third of the refill).
            if left[:needed] != right[:needed]:
                continue
            common = needed
            for a, b in zip(left[needed:], right[needed:]):
                if a != b:
                    break
                common += 1
            needed = common + 1
    return needed


def unique_cut(ids: Sequence[str], width: int) -> IdCut:
    """The cut for a column `width` cells wide (at least 2) that leaves every id distinct: the even
    cut when it does, else the split of that width that does and is nearest the even one, else
    the narrowest width at which a split does (the column must then be that wide)."""
    width = max(width, 2)
    cut = even(width)
    distinct = set(ids)
    longest = max((len(ident) for ident in distinct), default=0)
    if longest <= width or unique(ids, cut) or len(distinct) > SEARCH_LIMIT:
        return cut
    best: IdCut | None = None
    # Tails nearest the even split first: the first that fits `width` is the answer.
    for tail in sorted(range(width - 1), key=lambda t: (abs(t - cut.tail), -t)):
        head = _head_needed(distinct, tail, width)
        candidate = IdCut(max(head, width - 1 - tail), tail)
        if candidate.width <= width:
            return candidate
        if best is None or candidate.width < best.width:
            best = candidate
    wider = IdCut(longest, 0)
    return best if best is not None and best.width < longest and unique(ids, best) else wider
