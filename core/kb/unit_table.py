"""A KB's units as columns: ids, permission classes, locations and roles for every unit, and the
unit itself only when something asks for it.

Opening a 1M-unit KB must not build a million `KnowledgeUnit`s: the permitted view is a row mask
computed from the permission columns (one evaluation of the permission rule per distinct
Acl/Region/date combination, then a gather), ranking works on rows, and a unit is restored from
its segment when a caller-facing surface (an answer, evidence, the explorer) needs it. Rows are
numbered across the KB's sources (segments, or lists built in memory) in load order.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Iterator, Sequence
from itertools import chain

import numpy as np

from core.store.codec import COL, FACT, FILE, LINE, PERM, ROLE, ROLES, SET, Permission, UnitColumns, field_bit
from core.units import ROLE_DEFAULT_ACTS, Act, Caller, KnowledgeUnit, Role

PUBLIC: Permission = ((), None, None, None)


def permitted(perm: Permission, caller: Caller) -> bool:
    """The permission rule: Acl needs a shared tag, Region an equal region, dates must include as-of."""
    acl, region, start, end = perm
    if acl and not caller.tags.intersection(acl):
        return False
    if region is not None and (caller.region or "").casefold() != region.casefold():
        return False
    if start is not None and caller.as_of < start:
        return False
    return end is None or caller.as_of <= end


class UnitTable:
    """Columns of every unit read (duplicates included), plus which rows are live: the first
    unit of each id (a later one with the same id is reported as a duplicate).

    Which unit of a clashing id a caller is served is decided within the caller's view, never
    across it (`permitted_mask`): a unit the caller may not see neither takes an id from a unit
    they may see nor shows through one, and a view that would hold two units of one id holds
    neither (docs/security.md, "Duplicate ids")."""

    # Set by `_index_ids`, or shared with the table this one replaces.
    row_of: dict[str, int]
    live: np.ndarray
    single: np.ndarray
    order: np.ndarray
    rank: np.ndarray
    clashes: dict[str, np.ndarray]
    _clash_rows: np.ndarray
    _clash_group: np.ndarray

    def __init__(
        self, sources: Sequence[tuple[Sequence[KnowledgeUnit], UnitColumns]], previous: UnitTable | None = None
    ):
        """`previous`: the table this one replaces (a reload). When the ids come out the same,
        in the same order (an edit that changed text, not ids), the id map, live rows and id
        order depend on nothing else and are shared instead of rebuilt (~0.5 s at 1M units)."""
        self._sources = [units for units, _ in sources]
        columns = [cols for _, cols in sources]
        self._columns = columns
        self.first = np.cumsum([0, *(len(c.ids) for c in columns)])
        self.ids: list[str] = list(chain.from_iterable(c.ids for c in columns))
        if previous is not None and _same_ids(previous._columns, columns):
            self.row_of, self.live, self.single = previous.row_of, previous.live, previous.single
            self.order, self.rank = previous.order, previous.rank
            self.clashes, self._clash_rows, self._clash_group = (
                previous.clashes,
                previous._clash_rows,
                previous._clash_group,
            )
        else:
            self._index_ids()
        self.perms, self.perm = _joined(columns, PERM, lambda c: c.perms)
        self.files, self.file = _joined(columns, FILE, lambda c: c.files)
        self.file_index = {name: i for i, name in enumerate(self.files)}
        stacked = np.concatenate([c.cols for c in columns]) if columns else np.zeros((0, 7), np.int32)
        self.line, self.col = stacked[:, LINE], stacked[:, COL]
        self.role, self.fact = stacked[:, ROLE], stacked[:, FACT].astype(bool)
        self.fields_set = stacked[:, SET]
        self._digests: dict[int, np.ndarray] = {}
        self._lock = threading.Lock()

    def _index_ids(self) -> None:
        """The id map (first row of each id), live rows, the rows of clashing ids, and every row
        in id order (a clashing id's rows side by side, in load order) with their ranks."""
        n = len(self.ids)
        # dict keeps the last value of a repeated key: fed in reverse, the first row wins.
        self.row_of = dict(zip(reversed(self.ids), range(n - 1, -1, -1)))
        self.live = np.zeros(n, dtype=bool)
        self.live[np.fromiter(self.row_of.values(), dtype=np.int64, count=len(self.row_of))] = True
        self.clashes = {}
        if len(self.row_of) < n:
            later: dict[str, list[int]] = {}
            for row in np.flatnonzero(~self.live).tolist():
                later.setdefault(self.ids[row], []).append(row)
            self.clashes = {uid: np.array([self.row_of[uid], *rows], dtype=np.int64) for uid, rows in later.items()}
        self.single = self.live.copy()
        clash_rows = [rows for rows in self.clashes.values()]
        self._clash_rows = np.concatenate(clash_rows) if clash_rows else np.zeros(0, np.int64)
        self._clash_group = np.repeat(np.arange(len(clash_rows)), [len(rows) for rows in clash_rows]).astype(np.int64)
        self.single[self._clash_rows] = False
        # Files are mostly already in id order, which timsort merges in linear time (stable: a
        # clashing id's rows stay in load order).
        self.order = np.array(sorted(range(n), key=self.ids.__getitem__), dtype=np.int64)
        self.rank = np.empty(n, dtype=np.int64)
        self.rank[self.order] = np.arange(n)

    def rows_of(self, unit_id: str) -> np.ndarray | tuple[int, ...]:
        """Every row holding `unit_id`, in load order (more than one only for a clashing id)."""
        rows = self.clashes.get(unit_id)
        if rows is not None:
            return rows
        row = self.row_of.get(unit_id)
        return () if row is None else (row,)

    @classmethod
    def of_units(cls, units: Sequence[KnowledgeUnit]) -> UnitTable:
        units = tuple(units)
        return cls([(units, UnitColumns.of(units))])

    def __len__(self) -> int:
        return len(self.ids)

    def unit(self, row: int) -> KnowledgeUnit:
        source = bisect.bisect_right(self.first, row) - 1
        return self._sources[source][row - int(self.first[source])]

    def peek(self, row: int) -> KnowledgeUnit:
        """`unit(row)`, without keeping a stored unit restored (see `StoredUnits.peek`)."""
        source, at = self.source_of(row)
        units = self._sources[source]
        peek = getattr(units, "peek", None)
        return peek(at) if peek is not None else units[at]

    def source_of(self, row: int) -> tuple[int, int]:
        source = bisect.bisect_right(self.first, row) - 1
        return source, row - int(self.first[source])

    def permitted_mask(self, caller: Caller) -> np.ndarray:
        """Rows the caller may see, computed from the permission columns before any ranking.

        A clashing id is resolved among the rows the caller may see only: exactly one of them
        is served; none when the caller may see several (which one the author meant is unknown,
        and serving the first would let load order pick between texts with different permissions)."""
        if not len(self.perm):
            return np.zeros(0, dtype=bool)
        allowed = np.fromiter((permitted(p, caller) for p in self.perms), dtype=bool, count=len(self.perms))[self.perm]
        mask = allowed & self.single
        if len(self._clash_rows):
            seen = allowed[self._clash_rows]
            counts = np.bincount(self._clash_group[seen], minlength=len(self.clashes))
            mask[self._clash_rows[seen & (counts[self._clash_group] == 1)]] = True
        return mask

    def restricted_rows(self) -> np.ndarray:
        """Rows of units that write any permission field (not visible to every caller on every date)."""
        public = np.fromiter((p == PUBLIC for p in self.perms), dtype=bool, count=len(self.perms))
        return np.flatnonzero(~public[self.perm]) if len(self.perm) else np.zeros(0, dtype=np.int64)

    def file_names(self, rows: np.ndarray) -> set[str]:
        """The files the units of `rows` were read from."""
        # Not np.unique: its first call imports numpy.ma (~10-20 ms of every `mrptui ask`).
        codes = self.file[rows]
        present = np.bincount(codes[codes >= 0], minlength=len(self.files))
        return {self.files[index] for index in np.flatnonzero(present).tolist()}

    def roles(self, rows: np.ndarray) -> list:
        return [ROLES[code] for code in self.role[rows].tolist()]


def _same_ids(before: Sequence[UnitColumns], after: Sequence[UnitColumns]) -> bool:
    """Whether two lists of sources hold the same ids in the same order, comparing only the
    sources that changed (an unchanged file's columns are the same object)."""
    return len(before) == len(after) and all(
        old is new or old.ids == new.ids for old, new in zip(before, after, strict=True)
    )


def _joined(columns: Sequence[UnitColumns], col: int, table_of) -> tuple[list, np.ndarray]:
    """A column of per-source table indexes turned into indexes of one table across sources
    (-1, "none", stays -1)."""
    joined: dict = {}
    parts = []
    for columns_ in columns:
        remap = np.array([joined.setdefault(value, len(joined)) for value in table_of(columns_)] + [-1], dtype=np.int32)
        parts.append(remap[columns_.cols[:, col]])
    return list(joined), (np.concatenate(parts) if parts else np.zeros(0, np.int32))


class RowUnits(Sequence[KnowledgeUnit]):
    """Units by row of a `UnitTable` (a negative row -1-k is `extra[k]`), restored on access."""

    __slots__ = ("_extra", "_rows", "_table")

    def __init__(self, table: UnitTable, rows: np.ndarray, extra: Sequence[KnowledgeUnit] = ()):
        self._table = table
        self._rows = rows
        self._extra = extra

    def __len__(self) -> int:
        return len(self._rows)

    @property
    def rows(self) -> np.ndarray:
        """Table rows of these units; -1-k stands for the k-th current-turn unit."""
        return self._rows

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [self._unit(int(row)) for row in self._rows[index]]
        return self._unit(int(self._rows[index]))

    def __iter__(self) -> Iterator[KnowledgeUnit]:
        return map(self._unit, self._rows.tolist())

    def _unit(self, row: int) -> KnowledgeUnit:
        return self._table.unit(row) if row >= 0 else self._extra[-1 - row]

    def peek(self, index: int) -> KnowledgeUnit:
        """The unit at `index`, read without keeping it restored: for scans over the whole view."""
        row = int(self._rows[index])
        return self._table.peek(row) if row >= 0 else self._extra[-1 - row]

    def ids_roles_acts(self) -> tuple[list[str], list[Role], list[tuple[Act, ...]]]:
        """Each unit's id, role and acts from the columns: only a unit that wrote its own
        UtilityActs (or a current-turn unit) is restored."""
        table, acts_bit = self._table, field_bit("utility_acts")
        ids, roles, acts = [], [], []
        for row in self._rows.tolist():
            if row < 0 or table.fields_set[row] & acts_bit:
                unit = self._unit(row)
                uid, role, unit_acts = unit.id, unit.role, unit.acts
            else:
                uid, role = table.ids[row], ROLES[table.role[row]]
                unit_acts = ROLE_DEFAULT_ACTS[role]
            ids.append(uid)
            roles.append(role)
            acts.append(unit_acts)
        return ids, roles, acts

    def listed(self) -> tuple[list[str], set[Role], dict[str, int]]:
        """What a listing of the view shows of every unit, from the columns (only current-turn
        units are read): every id (current-turn units' last), the roles present, and the last
        line each file has in the view."""
        table, rows = self._table, self._rows
        own = rows[rows >= 0]
        ids = [table.ids[row] for row in own.tolist()]
        roles = {ROLES[code] for code in np.unique(table.role[own]).tolist()}
        located = own[table.file[own] >= 0]
        last = np.full(len(table.files), -1, dtype=np.int64)
        np.maximum.at(last, table.file[located], table.line[located])
        lines = {table.files[index]: int(line) for index, line in enumerate(last.tolist()) if line >= 0}
        for row in rows[rows < 0].tolist():
            unit = self._extra[-1 - row]
            ids.append(unit.id)
            roles.add(unit.role)
            if unit.location is not None:
                lines[unit.location.file] = max(lines.get(unit.location.file, 0), unit.location.line)
        return ids, roles, lines

    def id_at(self, index: int) -> str:
        row = int(self._rows[index])
        return self._table.ids[row] if row >= 0 else self._extra[-1 - row].id

    def index(self, value, start: int = 0, stop: int | None = None) -> int:  # type: ignore[override]
        """Position of the unit with `value`'s id (ids are unique in a view): found without
        restoring the units before it."""
        target = value.id
        stop = len(self) if stop is None else stop
        for row in self._table.rows_of(target):
            hits = np.flatnonzero(self._rows[start:stop] == row)
            if len(hits):
                return start + int(hits[0])
        for position in np.flatnonzero(self._rows[start:stop] < 0).tolist():
            position += start
            if self.id_at(position) == target:
                return position
        raise ValueError(f"{target!r} is not here")
