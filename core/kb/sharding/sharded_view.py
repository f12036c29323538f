"""A caller's view at the coordinator whose units come from the shards that hold them.

The coordinator still decides from its columns which ids the caller's view holds (ids, roles,
places: no text), but never restores a unit from its own KB for a question: the units a question
shows or explains (kept evidence, a passage's neighbours, explained candidates, HDC feedback) are
fetched by id from their shards, where the caller's view is applied again, so a unit the caller
may not see never reaches the coordinator (fail closed twice). Each fetch is one round of tasks
for all the ids a step asks for, and fetched units are kept for the view's next questions.

Whole-view scans, which only the lanes the shards do not serve need (the dense lane, exclusions,
learned HDC token vectors, tag warm-up, the explorer's KB screen), still read the coordinator's
KB (`units`, `fact_units`), as before.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Generic, Protocol, TypeVar

from core.kb.knowledge_base import KBView
from core.kb.sharding import shard_tasks
from core.kb.sharding.shards import ShardError
from core.units import KnowledgeUnit

V = TypeVar("V")

# Fetched units a view keeps (a question shows and explains a few dozen).
UNITS_KEPT = 512
# A passage reads at most a few units either side of a kept one: fetched together.
_NEIGHBOURS_FETCHED = 8


class ReadingOrder(Protocol):
    """A file's units' ids in reading order (`RowUnits`, or ids the shards sent)."""

    def __len__(self) -> int: ...

    def id_at(self, index: int) -> str: ...

    def index(self, value: Any, start: int = 0, stop: int | None = None) -> int: ...


class Units(Protocol):
    def units_of(self, unit_ids: Iterable[str]) -> list[KnowledgeUnit]: ...


class Shards(Protocol):
    """What this needs of `sharded.ShardSet` (which builds it: no import back)."""

    def each(self, task: Callable[..., Any], view: KBView, *args: Any) -> list[Any]: ...


class Kept(Generic[V]):
    """What the shards said of ids (their units, their roles), the `limit` most recently kept;
    shared by a view and the views that extend it with current-turn units."""

    def __init__(self, limit: int = UNITS_KEPT) -> None:
        self._said: OrderedDict[str, V] = OrderedDict()
        self._limit = limit
        self._lock = threading.Lock()

    def get(self, unit_ids: Iterable[str]) -> dict[str, V]:
        with self._lock:
            return {uid: self._said[uid] for uid in unit_ids if uid in self._said}

    def keep(self, said: dict[str, V]) -> None:
        with self._lock:
            self._said.update(said)
            while len(self._said) > self._limit:
                self._said.popitem(last=False)


class ShardedView(KBView):
    """`KBView` whose `get`, `units_of` and `in_file` units are fetched from the shards."""

    __slots__ = ("_fetched", "_shards")
    _fetched: Kept[KnowledgeUnit]
    _shards: Shards

    @classmethod
    def over(cls, view: KBView, shards: Shards, fetched: Kept[KnowledgeUnit] | None = None) -> ShardedView:
        """`view`'s units and key, its units fetched from `shards`."""
        sharded = cls.__new__(cls)
        for name in KBView.__slots__:
            setattr(sharded, name, getattr(view, name))
        sharded._shards = shards
        sharded._fetched = fetched if fetched is not None else Kept()
        return sharded

    def get(self, unit_id: str) -> KnowledgeUnit | None:
        found = self.units_of((unit_id,))
        return found[0] if found else None

    def units_of(self, unit_ids: Iterable[str]) -> list[KnowledgeUnit]:
        """The view's units of these ids, in order; those not fetched yet in one round of tasks."""
        ids = [uid for uid in unit_ids if self._row(uid) is not None or uid in self._extra_ids]
        held = [uid for uid in dict.fromkeys(ids) if uid not in self._extra_ids]
        found = self._fetched.get(held)
        wanted = [uid for uid in held if uid not in found]
        if wanted:
            sent = {unit.id: unit for part in self._shards.each(shard_tasks.units, self, wanted) for unit in part}
            missing = [uid for uid in wanted if uid not in sent]
            if missing:  # shards cut from this KB hold every unit of the view: never a silent gap
                raise ShardError(f"the shards did not send unit {missing[0]} of this view ({len(missing)} missing)")
            self._fetched.keep(sent)
            found |= sent
        return [found[uid] if uid in found else self._extra_ids[uid] for uid in ids]

    def in_file(self, file: str) -> Sequence[KnowledgeUnit]:  # type: ignore[override]
        return FileUnits(super().in_file(file), self)

    def with_extra(self, units: Iterable[KnowledgeUnit]) -> KBView:
        extended = super().with_extra(units)
        return self if extended is self else ShardedView.over(extended, self._shards, self._fetched)


class FileUnits(Sequence[KnowledgeUnit]):
    """A file's units in the view, in reading order, each fetched from its shard when read,
    with its neighbours."""

    def __init__(self, rows: ReadingOrder, view: Units):
        self._rows = rows
        self._view = view

    def __len__(self) -> int:
        return len(self._rows)

    @property
    def rows(self):
        """The units' table rows (a view extended by current-turn units reads its base's)."""
        return self._rows.rows  # type: ignore[attr-defined]  # a ShardedView's order is RowUnits

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return self._units(range(len(self))[index])
        at = range(len(self))[index]  # IndexError past the end, as a list
        near = range(max(0, at - _NEIGHBOURS_FETCHED), min(len(self), at + _NEIGHBOURS_FETCHED + 1))
        return self._units(near)[at - near.start]

    def __iter__(self) -> Iterator[KnowledgeUnit]:
        for start in range(0, len(self), UNITS_KEPT // 2):
            yield from self._units(range(start, min(len(self), start + UNITS_KEPT // 2)))

    def _units(self, positions: range) -> list[KnowledgeUnit]:
        return self._view.units_of([self._rows.id_at(i) for i in positions])

    def index(self, value, start: int = 0, stop: int | None = None) -> int:  # type: ignore[override]
        return self._rows.index(value, start, stop)
