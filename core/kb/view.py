"""A caller's permitted view of a KB: rows of the KB's unit table, restored when read.

Every backend ranks a `KBView`, which holds only the units the caller may see; restricted units
are absent from it, not flagged, so nothing built on a view can reveal them.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Iterable, Iterator, Sequence
from itertools import repeat
from typing import TYPE_CHECKING

import numpy as np

from core.kb.unit_table import RowUnits, UnitTable, permitted
from core.store.codec import ROLES
from core.store.segment import unit_digest
from core.units import Caller, CallerKey, KnowledgeUnit, Role

# A role code read from the table, or -1 (not held by the view) for None.
_ROLE_OR_NONE: tuple[Role | None, ...] = (*ROLES, None)

if TYPE_CHECKING:
    from core.infra.config import Bm25Config
    from core.retrieval.bm25.index import Bm25Index
    from core.retrieval.bm25.parts import Bm25Slice
    from core.store.stored import PartCache, StoredKb
    from core.store.tokens import Tokens

# KB version, the caller's value, and a digest of the request's own units ("" when none).
ViewKey = tuple[str, CallerKey, str]


class KBView:
    """The units one caller may see, in id order; immutable, and keyed for index caches.

    A view is rows of the KB's `UnitTable` (plus current-turn units, as negative rows -1-k into
    `extra`): building one gathers the permitted rows from the permission columns, and a unit is
    restored only when something reads it.
    """

    __slots__ = (
        "_base",
        "_by_file",
        "_caller",
        "_extra",
        "_extra_ids",
        "_key",
        "_rows",
        "_stored",
        "_table",
        "_version",
        "_visible",
    )

    def __init__(
        self,
        units: Iterable[KnowledgeUnit],
        key: ViewKey,
        caller: Caller,
        stored: StoredKb | None = None,
        *,
        table: UnitTable | None = None,
        rows: np.ndarray | None = None,
    ):
        """A view of `units` as given, or (with `table`) of the table's `rows` in id order."""
        if table is None:
            table = UnitTable.of_units(tuple(units))
            rows = table.order
        self._table = table
        self._rows = rows if rows is not None else table.order
        self._visible = np.zeros(len(table), dtype=bool)
        self._visible[self._rows] = True
        self._key = key
        self._caller = caller
        self._version: str | None = None
        self._stored = stored
        self._base: KBView | None = None
        self._extra: tuple[KnowledgeUnit, ...] = ()
        self._extra_ids: dict[str, KnowledgeUnit] = {}
        self._by_file: dict[str, RowUnits] = {}

    @property
    def table(self) -> UnitTable:
        return self._table

    @property
    def rows(self) -> np.ndarray:
        """Table rows of the view's units in id order; -1-k stands for `extra[k]`."""
        return self._rows

    def in_file(self, file: str) -> RowUnits:
        """The view's units read from `file`, in reading order (line, column, id)."""
        found = self._by_file.get(file)
        if found is None:
            table = self._table
            if self._base is not None:
                # The same table rows as the base view, which keeps them across requests: a
                # view with context units is new per request, and the scan is O(view) (100k rows).
                mine = self._base.in_file(file).rows
            else:
                held = self._rows[self._rows >= 0]
                index = table.file_index.get(file)
                mine = held[table.file[held] == index] if index is not None else held[:0]
                mine = mine[np.lexsort((table.rank[mine], table.col[mine], table.line[mine]))]
            extra = sorted(
                (u.location.line, u.location.col, u.id, -1 - k)
                for k, u in enumerate(self._extra)
                if u.location is not None and u.location.file == file
            )
            if extra:
                keys = [(int(table.line[r]), int(table.col[r]), table.ids[r], int(r)) for r in mine.tolist()]
                mine = np.array([key[3] for key in sorted([*keys, *extra])], dtype=np.int64)
            found = self._by_file[file] = RowUnits(table, mine, self._extra)
        return found

    @property
    def base(self) -> KBView | None:
        """The view this one extends with current-turn units (None for a caller's plain view)."""
        return self._base

    @property
    def extra(self) -> tuple[KnowledgeUnit, ...]:
        """The current-turn units added to `base`, which indexes score in a side index."""
        return self._extra

    @property
    def units(self) -> RowUnits:
        """The view's units in id order, each restored when read."""
        return RowUnits(self._table, self._rows, self._extra)

    def ids(self) -> Sequence[str]:
        """The ids of the view's units in id order, read without restoring a unit."""
        return _Ids(self.units)

    def fact_units(self) -> RowUnits:
        """The view's units that state a fact (subject, relation, object): ThinkingDB's input."""
        rows = self._rows
        held = rows >= 0
        keep = np.zeros(len(rows), dtype=bool)
        keep[held] = self._table.fact[rows[held]]
        for position in np.flatnonzero(~held).tolist():
            keep[position] = self._extra[-1 - int(rows[position])].relation is not None
        return RowUnits(self._table, rows[keep], self._extra)

    @property
    def key(self) -> ViewKey:
        """KB version, the caller's value and a digest of current-turn units: equal keys, equal units."""
        return self._key

    @property
    def version(self) -> str:
        """A digest of the units in this view: it changes only when what this caller sees changes,
        so a caller cannot learn from it that a unit outside their view was edited."""
        if self._version is None:
            # Per-unit digests come from the segments when stored: hashing a 100k-unit view's
            # JSON again would cost a second on the first question.
            stored = self._stored.unit_digests(self._rows, self._extra) if self._stored is not None else None
            digests = stored if stored is not None else b"".join(unit_digest(unit) for unit in self.units)
            self._version = hashlib.sha256(digests).hexdigest()[:16]
        return self._version

    @property
    def caller(self) -> Caller:
        return self._caller

    def _row(self, unit_id: str) -> int | None:
        """The table row of the view's unit of this id: of a clashing id, the one this view holds."""
        for row in self._table.rows_of(unit_id):
            if self._visible[row]:
                return int(row)
        return None

    def row_of(self, unit_id: str) -> int | None:
        """The table row of the view's unit of this id; None when the view does not hold it (or
        holds it as a current-turn unit)."""
        return self._row(unit_id)

    def clashing(self, unit_id: str) -> int:
        """How many units of this id the caller may see when that is more than one (the view then
        holds none of them: core/kb/unit_table.py), else 0. Counting only units in the caller's
        permission, it says nothing of any other."""
        rows = self._table.clashes.get(unit_id)
        if rows is None or unit_id in self._extra_ids:
            return 0
        table = self._table
        seen = sum(permitted(table.perms[table.perm[row]], self._caller) for row in rows.tolist())
        return seen if seen > 1 else 0

    def get(self, unit_id: str) -> KnowledgeUnit | None:
        """The unit, or None when it does not exist or the caller may not see it (indistinguishable)."""
        row = self._row(unit_id)
        if row is not None:
            return self._table.unit(row)
        return self._extra_ids.get(unit_id)

    def units_of(self, unit_ids: Iterable[str]) -> list[KnowledgeUnit]:
        """`get` of each id the view holds, in the given order (a view whose units are held
        elsewhere fetches them together: core/kb/sharding/sharded_view.py)."""
        return [unit for unit in map(self.get, unit_ids) if unit is not None]

    def role_of(self, unit_id: str) -> Role | None:
        """The role of a unit in the view (None when absent), read without restoring the unit."""
        row = self._row(unit_id)
        if row is not None:
            return ROLES[int(self._table.role[row])]
        extra = self._extra_ids.get(unit_id)
        return extra.role if extra is not None else None

    def roles_of(self, unit_ids: Iterable[str]) -> tuple[dict[str, Role | None], frozenset[str]]:
        """`role_of` of each id, and which of them `is_current`. Fusion asks for every pooled unit
        (~1,000 per question at 100k units), so rows are found by one dict lookup per id (a
        clashing id, rare, as `_row` finds it) and checked against the view and read in array
        steps; only ids the view's table does not hold are looked at one by one."""
        table = self._table
        ids = list(dict.fromkeys(unit_ids))
        rows = np.fromiter(map(table.row_of.get, ids, repeat(-1)), dtype=np.int64, count=len(ids))
        if table.clashes:
            for at, unit_id in enumerate(ids):
                if unit_id in table.clashes:
                    row = self._row(unit_id)
                    rows[at] = -1 if row is None else row
        held = rows >= 0
        held[held] = self._visible[rows[held]]
        codes = np.where(held, table.role[np.where(held, rows, 0)], -1).tolist()
        roles: dict[str, Role | None] = dict(zip(ids, map(_ROLE_OR_NONE.__getitem__, codes), strict=True))
        current = []
        for at in np.flatnonzero(~held).tolist():
            extra = self._extra_ids.get(ids[at])
            if extra is not None:
                roles[ids[at]] = extra.role
                current.append(ids[at])
        return roles, frozenset(current)

    def hidden_files(self) -> set[str]:
        """The files that hold restricted units of which this view holds none: what a caller's
        diagnostics must not speak of (core/kb/health.py)."""
        table = self._table
        return table.file_names(table.restricted_rows()) - table.file_names(self._rows[self._rows >= 0])

    def is_current(self, unit_id: str) -> bool:
        """Whether the view's unit of this id is a current-turn unit of the request."""
        return self._row(unit_id) is None and unit_id in self._extra_ids

    def __contains__(self, unit_id: object) -> bool:
        if not isinstance(unit_id, str):
            return False
        return self._row(unit_id) is not None or unit_id in self._extra_ids

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[KnowledgeUnit]:
        return iter(self.units)

    def tokens(self) -> Tokens | None:
        """The stored token ids of exactly this view's units, or None when BM25 must tokenise."""
        return self._stored.tokens(self._rows, self._extra) if self._stored is not None else None

    def bm25_parts(self, config: Bm25Config, cache: PartCache) -> list[Bm25Index | Bm25Slice] | None:
        """This view's BM25 as one part per KB file (None when the KB has no stored segments)."""
        return self._stored.bm25_parts(self._rows, self._extra, config, cache) if self._stored is not None else None

    def merged_bm25(self, config: Bm25Config, build: bool, cache: PartCache | None = None) -> Bm25Index | None:
        """One BM25 index over this view from the cache (or built and saved when `build`);
        `cache` remembers it, so a reload's view scores its unchanged files from it."""
        if self._stored is None:
            return None
        return self._stored.merged_bm25(self._rows, self._extra, config, build, cache)

    @property
    def stored(self) -> StoredKb | None:
        """The KB's segments (None for a KB built in memory): where unit vectors are kept."""
        return self._stored

    def with_extra(self, units: Iterable[KnowledgeUnit]) -> KBView:
        """A new view with this request's own units added, marked current-turn.

        An extra unit whose id is already in the view is left out: the KB's unit stays, so a
        request cannot replace evidence by reusing its id.
        """
        extra = tuple(unit.model_copy(update={"current_turn": True}) for unit in units if unit.id not in self)
        if not extra:
            return self
        digest = digest_lines(unit.model_dump_json() for unit in extra)
        version, caller, earlier = self._key
        key = (version, caller, digest_lines([earlier, digest]))
        view = KBView((), key, self._caller, self._stored, table=self._table, rows=self._rows[self._rows >= 0])
        view._base = self._base or self
        view._extra = (*self._extra, *extra)
        view._extra_ids = {unit.id: unit for unit in view._extra}
        # Per request at up to 1M units: insert the few extras' rows at their id positions
        # rather than sorting every row again.
        rows = self._rows
        for k, unit in enumerate(extra, start=len(self._extra)):
            at = bisect.bisect_left(_Ids(RowUnits(self._table, rows, view._extra)), unit.id)
            rows = np.insert(rows, at, -1 - k)
        view._rows = rows
        return view

    def without(self, unit_ids: Iterable[str]) -> KBView:
        """A new view without these units: evidence a user excluded while debugging a run."""
        gone = sorted(unit_id for unit_id in set(unit_ids) if unit_id in self)
        if not gone:
            return self
        kept = [unit for unit in self.units if unit.id not in gone]
        version, caller, earlier = self._key
        return KBView(kept, (version, caller, digest_lines([earlier, "without", *gone])), self._caller)


class _Ids(Sequence[str]):
    """The ids of a `RowUnits`, read from the table: bisecting them restores no unit."""

    def __init__(self, units: RowUnits):
        self._units = units

    def __len__(self) -> int:
        return len(self._units)

    def __getitem__(self, index):  # type: ignore[override]
        return self._units.id_at(index)


def digest_lines(parts: Iterable[str]) -> str:
    hasher = hashlib.sha256()
    for part in parts:
        hasher.update(part.encode("utf-8", "surrogateescape"))
        hasher.update(b"\n")
    return hasher.hexdigest()[:16]
