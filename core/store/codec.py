"""Units to and from a segment, restored one at a time and only when asked for.

A segment stores each unit's JSON (`units.jsonl`, with `offsets.npy`), and beside it the few
columns that opening a KB and ranking need for every unit: ids, a permission class per unit
(its Acl, Region and effective dates, as a small table), the location, the role and whether it
states a fact (`columns.json`, `cols.npy`). Opening a KB reads the columns only; a unit becomes
a `KnowledgeUnit` when a caller-facing surface asks for it (`StoredUnits[i]`).

Writing goes through pydantic (validated models). Reading does not validate again: a segment's
bytes are checksummed and its key covers the source of `core/units.py`, so they are exactly
what a validated model dumped.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from core.units import Act, KnowledgeUnit, Relation, Role, SourceLocation

_FIELDS = tuple(KnowledgeUnit.model_fields)
ROLES: tuple[Role, ...] = tuple(Role)
# Columns of `cols.npy`, one row per unit.
PERM, FILE, LINE, COL, ROLE, FACT, SET = range(7)
WIDTH = 7
# (acl, region, effective_from, effective_to): what the permission rule reads.
Permission = tuple[tuple[str, ...], str | None, dt.date | None, dt.date | None]


def field_bit(name: str) -> int:
    """The bit of KnowledgeUnit field `name` in the SET column (the fields a unit set)."""
    return 1 << _FIELDS.index(name)


_Model = TypeVar("_Model")
_BITS = {name: field_bit(name) for name in _FIELDS}
_ROLE_CODES = {role: code for code, role in enumerate(ROLES)}


def _make(cls: type[_Model], values: dict, fields_set: set[str]) -> _Model:
    """What pydantic's model_construct sets, without its per-field Python work."""
    model = object.__new__(cls)
    object.__setattr__(model, "__dict__", values)
    object.__setattr__(model, "__pydantic_fields_set__", fields_set)
    object.__setattr__(model, "__pydantic_extra__", None)
    object.__setattr__(model, "__pydantic_private__", None)
    return model


def _location(raw: dict) -> SourceLocation:
    values = {
        "file": raw["file"],
        "line": raw.get("line", 1),
        "col": raw.get("col", 1),
        "prose": raw.get("prose", False),
    }
    return _make(SourceLocation, values, set(raw))


def _date(value: str | None) -> dt.date | None:
    return dt.date.fromisoformat(value) if value is not None else None


# Fields whose JSON form is not already their Python value.
_CONVERT: dict[str, Callable] = {
    "role": Role,
    "utility_acts": lambda items: tuple(map(Act, items)),
    "phase_scopes": tuple,
    "relation": lambda value: Relation(value) if value is not None else None,
    "acl": tuple,
    "effective_from": _date,
    "effective_to": _date,
    "location": lambda value: _location(value) if value is not None else None,
}


@dataclass(frozen=True)
class UnitColumns:
    """What every unit of a segment contributes before any unit is restored."""

    ids: list[str]
    perms: list[Permission]
    files: list[str]
    cols: np.ndarray  # int32 [n, WIDTH]

    @classmethod
    def of(cls, units: Sequence[KnowledgeUnit]) -> UnitColumns:
        perms: dict[Permission, int] = {}
        files: dict[str, int] = {}
        rows = []
        for unit in units:
            perm = (unit.acl, unit.region, unit.effective_from, unit.effective_to)
            where = unit.location
            rows.append(
                (
                    perms.setdefault(perm, len(perms)),
                    files.setdefault(where.file, len(files)) if where is not None else -1,
                    where.line if where is not None else 0,
                    where.col if where is not None else 0,
                    _ROLE_CODES[unit.role],
                    unit.relation is not None,
                    sum(map(_BITS.__getitem__, unit.model_fields_set)),
                )
            )
        cols = np.array(rows, dtype=np.int32).reshape(len(units), WIDTH)
        return cls([unit.id for unit in units], list(perms), list(files), cols)

    @classmethod
    def join(cls, parts: Sequence[UnitColumns]) -> UnitColumns:
        """The columns of several parts' units, one part after another (their permission
        classes and files merged into one table each)."""
        perms: dict[Permission, int] = {}
        files: dict[str, int] = {}
        cols = []
        for part in parts:
            perm_of = np.array([perms.setdefault(perm, len(perms)) for perm in part.perms], dtype=np.int32)
            # A unit without a location has file -1, which indexes the appended -1.
            file_of = np.array([*(files.setdefault(file, len(files)) for file in part.files), -1], dtype=np.int32)
            moved = np.array(part.cols, dtype=np.int32)
            if len(moved):
                moved[:, PERM] = perm_of[moved[:, PERM]]
                moved[:, FILE] = file_of[moved[:, FILE]]
            cols.append(moved.reshape(len(part.ids), WIDTH))
        stacked = np.concatenate(cols) if cols else np.zeros((0, WIDTH), dtype=np.int32)
        return cls([unit_id for part in parts for unit_id in part.ids], list(perms), list(files), stacked)

    def dump(self) -> bytes:
        perms = [[list(acl), region, _iso(start), _iso(end)] for acl, region, start, end in self.perms]
        return json.dumps({"fields": _FIELDS, "ids": self.ids, "perms": perms, "files": self.files}).encode()

    @classmethod
    def load(cls, data: bytes, cols: np.ndarray) -> UnitColumns:
        """Columns from `dump` output; raises ValueError/KeyError/TypeError on foreign data."""
        stored = json.loads(data)
        if tuple(stored["fields"]) != _FIELDS:
            raise ValueError("unit fields differ from this version's")
        perms = [(tuple(acl), region, _date(start), _date(end)) for acl, region, start, end in stored["perms"]]
        columns = cls(stored["ids"], perms, stored["files"], cols)
        columns.check()
        return columns

    def check(self) -> None:
        n = len(self.ids)
        if self.cols.shape != (n, WIDTH) or self.cols.dtype != np.int32:
            raise ValueError("unit columns do not match the unit count")
        if n and (
            int(self.cols[:, PERM].min()) < 0
            or int(self.cols[:, PERM].max()) >= len(self.perms)
            or int(self.cols[:, FILE].min()) < -1
            or int(self.cols[:, FILE].max()) >= len(self.files)
            or int(self.cols[:, ROLE].min()) < 0
            or int(self.cols[:, ROLE].max()) >= len(ROLES)
        ):
            raise ValueError("unit columns point outside their tables")


def _iso(day: dt.date | None) -> str | None:
    return day.isoformat() if day is not None else None


def dump_units(units: Sequence[KnowledgeUnit]) -> tuple[bytes, np.ndarray]:
    """Every unit's JSON, concatenated, and where each one starts and ends (n + 1 offsets)."""
    # The serializer's own bytes: `model_dump_json` decodes them to a str that would be encoded back.
    to_json = KnowledgeUnit.__pydantic_serializer__.to_json
    blobs = list(map(to_json, units))
    offsets = np.zeros(len(blobs) + 1, dtype=np.int64)
    np.cumsum([len(blob) for blob in blobs], out=offsets[1:])
    return b"".join(blobs), offsets


class StoredUnits(Sequence[KnowledgeUnit]):
    """A segment's units, each restored from its JSON on first access and then kept."""

    def __init__(self, blob: bytes | memoryview, offsets: np.ndarray, masks: np.ndarray):
        if offsets.ndim != 1 or len(offsets) != len(masks) + 1 or (len(offsets) and int(offsets[-1]) != len(blob)):
            raise ValueError("unit offsets do not match the stored units")
        self._blob = blob
        self._offsets = offsets
        self._masks = masks
        self._units: list[KnowledgeUnit | None] = [None] * len(masks)
        self._sets: dict[int, set[str]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._units)

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        unit = self._units[index]
        return unit if unit is not None else self._restore(index)

    def __iter__(self) -> Iterator[KnowledgeUnit]:
        for index in range(len(self._units)):
            yield self[index]

    @property
    def offsets(self) -> np.ndarray:
        """Where each unit's JSON starts in the stored bytes (n + 1 offsets)."""
        return np.asarray(self._offsets)

    def json_of(self, start: int, stop: int) -> bytes:
        """The stored JSON of units start..stop-1, one after another, without restoring them."""
        return bytes(self._blob[int(self._offsets[start]) : int(self._offsets[stop])])

    def dump(self) -> tuple[bytes, np.ndarray]:
        """What `dump_units` returns for these units, from the stored bytes (nothing restored)."""
        return bytes(self._blob), np.asarray(self._offsets)

    def seed(self, index: int, unit: KnowledgeUnit) -> None:
        """Keep `unit` (whose JSON is stored at `index`) instead of restoring it on first access."""
        self._units[index] = unit

    def restored(self) -> int:
        """How many units have been restored so far (tests assert laziness with it)."""
        return sum(unit is not None for unit in self._units)

    def peek(self, index: int) -> KnowledgeUnit:
        """The unit at `index`, restored without keeping it when it was not kept yet: a scan of a
        whole view (the KB screen's search) must not end up holding every unit it read."""
        unit = self._units[index]
        return unit if unit is not None else self._decode(index)

    def _restore(self, index: int) -> KnowledgeUnit:
        unit = self._decode(index)
        self._units[index] = unit
        return unit

    def _decode(self, index: int) -> KnowledgeUnit:
        if index < 0:
            index += len(self._units)
        start, end = int(self._offsets[index]), int(self._offsets[index + 1])
        raw = json.loads(bytes(self._blob[start:end]))
        mask = int(self._masks[index])
        with self._lock:
            fields_set = self._sets.get(mask)
            if fields_set is None:
                fields_set = self._sets[mask] = {name for i, name in enumerate(_FIELDS) if mask >> i & 1}
        values = {name: (_CONVERT[name](raw[name]) if name in _CONVERT else raw[name]) for name in _FIELDS}
        # Units are frozen, so one set object per distinct mask is safe to share.
        return _make(KnowledgeUnit, values, fields_set)
