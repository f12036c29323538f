"""The knowledge base: units loaded from files and folders, and the permitted view per caller.

A `KnowledgeBase` is immutable: reloading builds a new one, so a query running on the old
object never sees a mix of old and new units. Every backend ranks a `KBView`, which holds only
the units the caller may see; restricted units are absent from it, not flagged, so nothing
built on a view can reveal them.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from core.cnl import FOLDER_SUFFIXES
from core.diagnostics import Code, Diagnostic, Severity
from core.store import Segment, SegmentStore, default_store
from core.store.segment import unit_digest
from core.store.stored import StoredKb
from core.unit_table import RowUnits, UnitTable, permitted
from core.store.codec import ROLES
from core.units import Caller, CallerKey, KnowledgeUnit, Role

if TYPE_CHECKING:
    from core.config import Bm25Config
    from core.retrieval.bm25 import Bm25Index
    from core.store.stored import PartCache
    from core.store.tokens import Tokens

# synonyms.txt is the KB's synonyms file (core/synonyms.py), not KB text.
IGNORED_FILE_NAMES = frozenset({"queries.json", "synonyms.txt"})
_MAX_CACHED_VIEWS = 8
# (mtime_ns, size) of a scanned file; a path that could not be stat-ed gets _MISSING.
_Stat = tuple[int, int]
_MISSING: _Stat = (-1, -1)
# KB version, the caller's value, and a digest of the request's own units ("" when none).
ViewKey = tuple[str, CallerKey, str]


def visible_to(unit: KnowledgeUnit, caller: Caller) -> bool:
    """The permission rule (`permitted`) applied to one unit."""
    return permitted((unit.acl, unit.region, unit.effective_from, unit.effective_to), caller)


class KBView:
    """The units one caller may see, in id order; immutable, and keyed for index caches.

    A view is rows of the KB's `UnitTable` (plus current-turn units, as negative rows -1-k into
    `extra`): building one gathers the permitted rows from the permission columns, and a unit is
    restored only when something reads it.
    """

    __slots__ = (
        "_base", "_by_file", "_caller", "_extra", "_extra_ids", "_key", "_rows", "_stored", "_table", "_version",
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
            table, rows = self._table, self._rows
            held = rows[rows >= 0]
            index = table.file_index.get(file)
            mine = held[table.file[held] == index] if index is not None else held[:0]
            mine = mine[np.lexsort((table.rank[mine], table.col[mine], table.line[mine]))]
            extra = sorted(
                (u.location.line, u.location.col, u.id, -1 - k)
                for k, u in enumerate(self._extra) if u.location is not None and u.location.file == file
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

    def get(self, unit_id: str) -> KnowledgeUnit | None:
        """The unit, or None when it does not exist or the caller may not see it (indistinguishable)."""
        row = self._table.row_of.get(unit_id)
        if row is not None and self._visible[row]:
            return self._table.unit(row)
        return self._extra_ids.get(unit_id)

    def role_of(self, unit_id: str) -> Role | None:
        """The role of a unit in the view (None when absent), read without restoring the unit."""
        row = self._table.row_of.get(unit_id)
        if row is not None and self._visible[row]:
            return ROLES[int(self._table.role[row])]
        extra = self._extra_ids.get(unit_id)
        return extra.role if extra is not None else None

    def is_current(self, unit_id: str) -> bool:
        """Whether the view's unit of this id is a current-turn unit of the request."""
        row = self._table.row_of.get(unit_id)
        return not (row is not None and self._visible[row]) and unit_id in self._extra_ids

    def __contains__(self, unit_id: object) -> bool:
        if not isinstance(unit_id, str):
            return False
        row = self._table.row_of.get(unit_id)
        return (row is not None and bool(self._visible[row])) or unit_id in self._extra_ids

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[KnowledgeUnit]:
        return iter(self.units)

    def tokens(self) -> Tokens | None:
        """The stored token ids of exactly this view's units, or None when BM25 must tokenise."""
        return self._stored.tokens(self._rows, self._extra) if self._stored is not None else None

    def bm25_parts(self, config: Bm25Config, cache: PartCache) -> list[Bm25Index] | None:
        """This view's BM25 as one part per KB file (None when the KB has no stored segments)."""
        return self._stored.bm25_parts(self._rows, self._extra, config, cache) if self._stored is not None else None

    def merged_bm25(self, config: Bm25Config, build: bool) -> Bm25Index | None:
        """One BM25 index over this view from the cache (or built and saved when `build`)."""
        return self._stored.merged_bm25(self._rows, self._extra, config, build) if self._stored is not None else None

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
        digest = _digest(unit.model_dump_json() for unit in extra)
        version, caller, earlier = self._key
        key = (version, caller, _digest([earlier, digest]))
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
        return KBView(kept, f"{self._key}-{_digest(gone)}", self._caller)


class KnowledgeBase:
    """Units and diagnostics from KB files; build with `load` or `from_units`, never mutate."""

    def __init__(
        self,
        paths: Sequence[Path],
        files: Sequence[Path],
        table: UnitTable,
        diagnostics: Iterable[Diagnostic],
        version: str,
        stats: dict[str, _Stat],
        segments: Mapping[str, Segment] | None = None,
        store: SegmentStore | None = None,
    ):
        self._paths = tuple(paths)
        self._files = tuple(files)
        self._table = table
        self._units: tuple[KnowledgeUnit, ...] | None = None
        self._diagnostics = tuple(diagnostics)
        self._version = version
        self._stats = dict(stats)
        self._views: OrderedDict[ViewKey, KBView] = OrderedDict()
        self._views_lock = threading.Lock()
        self._stored = StoredKb(segments, store) if segments and store is not None else None

    @classmethod
    def load(
        cls, paths: Sequence[Path], store: SegmentStore | None = None, previous: KnowledgeBase | None = None
    ) -> KnowledgeBase:
        """Read files and folders (recursively; `.md`, `.cnl`, `.txt`, `.nl`; `.jsonl` only when named)
        in a fixed order.

        Folders skip hidden entries, `queries.json` and other extensions; a file named
        explicitly must have a supported extension. Nothing here raises for bad input.
        Each file's segment comes from `previous` when the file's stat is unchanged, else from
        `store` (the index cache; default: the one the environment names), which reads or builds it.
        """
        store = store if store is not None else default_store()
        paths = [Path(path) for path in paths]
        # Stat before reading: a file changed during the load then differs from the recorded
        # stat, and the next poll reloads it.
        stats = _scan(paths)
        diagnostics: list[Diagnostic] = []
        files: list[Path] = []
        for path in paths:
            if not _exists(path):
                diagnostics.append(Diagnostic(code=Code.PATH_NOT_FOUND, message="no such file or directory", file=str(path)))
            else:
                files.extend(_kb_files(path) if path.is_dir() else [path])
        files = list(dict.fromkeys(files))
        segments = {str(file): _segment(file, stats, store, previous) for file in files}
        table = UnitTable([(segment.units, segment.columns) for segment in segments.values()])
        read_diagnostics = _diagnostics(files, segments, table)
        notes = store.take_notes()
        store.prune()
        version = _digest(_stat_lines(stats))
        return cls(paths, files, table, [*diagnostics, *read_diagnostics, *notes], version, stats, segments, store)

    @classmethod
    def from_units(cls, units: Iterable[KnowledgeUnit], diagnostics: Iterable[Diagnostic] = ()) -> KnowledgeBase:
        """A KB of units built in memory (tests, benchmarks); its version hashes their content."""
        table = UnitTable.of_units(tuple(units))
        kept = [table.unit(int(row)) for row in np.flatnonzero(table.live)]
        return cls((), (), table, [*diagnostics, *_duplicates(table)], _digest(u.model_dump_json() for u in kept), {})

    @staticmethod
    def fingerprint_of(paths: Sequence[Path]) -> str:
        """A cheap stat-based digest of the KB files under `paths`; it changes when any of them does."""
        return _digest(_stat_lines(_scan([Path(path) for path in paths])))

    @property
    def paths(self) -> tuple[Path, ...]:
        return self._paths

    @property
    def files(self) -> tuple[Path, ...]:
        """The files read, in load order (also those that produced only diagnostics)."""
        return self._files

    @property
    def units(self) -> tuple[KnowledgeUnit, ...]:
        """Every loaded unit, restricted ones included, in id order. Rank a `view()` instead.

        Restores every unit: for checks and evaluation, not for the open or query path."""
        if self._units is None:
            self._units = tuple(RowUnits(self._table, self._table.order))
        return self._units

    @property
    def unit_count(self) -> int:
        return len(self._table.order)

    @property
    def diagnostics(self) -> tuple[Diagnostic, ...]:
        return self._diagnostics

    @property
    def version(self) -> str:
        """Changes whenever the KB's files (or, for `from_units`, its units) change."""
        return self._version

    def fingerprint(self) -> str:
        """The version the KB would have if loaded now; differs from `version` once files change."""
        return self.fingerprint_of(self._paths) if self._paths else self._version

    def changed_files(self) -> tuple[Path, ...]:
        """Files added, removed or modified since this KB was loaded, sorted."""
        now = _scan(list(self._paths))
        names = set(now) | set(self._stats)
        return tuple(Path(name) for name in sorted(names) if now.get(name) != self._stats.get(name))

    def reload(self) -> KnowledgeBase:
        """A freshly loaded KB from the same paths; this one is left untouched.

        Only files whose stat changed are read again (and only their segments rebuilt)."""
        return self.load(self._paths, self._stored.store if self._stored else None, previous=self)

    def _segment_of(self, name: str, stat: _Stat) -> Segment | None:
        """This load's segment of a file, if the file's stat is still `stat`."""
        if self._stored is None or stat == _MISSING or self._stats.get(name) != stat:
            return None
        return self._stored.segments.get(name)

    def failing_closed(self, previous: KnowledgeBase) -> KnowledgeBase:
        """This KB after a reload from `previous`: a unit whose file now has errors and that the
        file no longer yields is withdrawn for every caller, with a warning naming the file.

        Never the last good version: a failed edit may have been the one that restricted the
        unit (an added Acl, a narrower Region or date), so serving the old text could widen
        access. The file's other units are read afresh and stay served; the reader's own errors
        tell the author, at file and line, what to fix.
        """
        broken = {d.file for d in self._diagnostics if d.is_error}
        before = previous._table
        broken_files = [i for i, name in enumerate(before.files) if name in broken]
        rows = np.flatnonzero(np.isin(before.file, broken_files) & before.live) if broken_files else []
        fresh_ids = self._table.row_of
        gone = {before.files[before.file[row]] for row in rows if before.ids[row] not in fresh_ids}
        # Until the file is fixed the note stays, across reloads that change other files.
        gone |= {d.file for d in previous.diagnostics if d.code is Code.UNITS_WITHDRAWN and d.file in broken}
        if not gone:
            return self
        notes = [
            Diagnostic(
                code=Code.UNITS_WITHDRAWN,
                message="units this file held before are withdrawn for every caller until its errors are fixed",
                file=file,
                severity=Severity.WARNING,
            )
            for file in sorted(gone)
        ]
        return KnowledgeBase(
            self._paths, self._files, self._table, [*self._diagnostics, *notes], self._version, self._stats,
            self._stored.segments if self._stored else None, self._stored.store if self._stored else None,
        )

    def holds(self, path: Path) -> bool:
        """Whether `path` is one of this KB's files, or a KB-format file inside one of its folders:
        a file a reload would read, which no export or trace may create or replace."""
        target = _real(path)
        if any(target == _real(file) for file in self._files):
            return True
        if os.path.splitext(target.name)[1].lower() not in FOLDER_SUFFIXES:
            return False
        return any(folder.is_dir() and target.is_relative_to(_real(folder)) for folder in self._paths)

    def view(self, caller: Caller) -> KBView:
        """The permitted view for `caller`, built before any ranking; cached per caller."""
        key: ViewKey = (self._version, caller.key, "")
        with self._views_lock:
            view = self._views.get(key)
            if view is None:
                table = self._table
                rows = table.order[table.permitted_mask(caller)[table.order]]
                view = KBView((), key, caller, self._stored, table=table, rows=rows)
                self._views[key] = view
                if len(self._views) > _MAX_CACHED_VIEWS:
                    self._views.popitem(last=False)
            else:
                self._views.move_to_end(key)
            return view


class _Ids(Sequence[str]):
    """The ids of a `RowUnits`, read from the table: bisecting them restores no unit."""

    def __init__(self, units: RowUnits):
        self._units = units

    def __len__(self) -> int:
        return len(self._units)

    def __getitem__(self, index):  # type: ignore[override]
        return self._units.id_at(index)


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _exists(path: Path) -> bool:
    return path.exists() or path.is_symlink()


def _is_hidden(name: str) -> bool:
    return name.startswith(".")


def _kb_files(folder: Path) -> list[Path]:
    found: list[Path] = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = [name for name in dirs if not _is_hidden(name)]
        found.extend(
            Path(root) / name
            for name in names
            if not _is_hidden(name)
            and name not in IGNORED_FILE_NAMES
            and os.path.splitext(name)[1].lower() in FOLDER_SUFFIXES
        )
    return sorted(found, key=lambda path: path.relative_to(folder).parts)


def _scan(paths: Sequence[Path]) -> dict[str, _Stat]:
    """Stat every KB file under `paths` (and each explicitly named path, whatever its type)."""
    stats: dict[str, _Stat] = {}
    for path in paths:
        files = _kb_files(path) if path.is_dir() else [path]
        for file in files:
            try:
                info = file.stat()
                stats[str(file)] = (info.st_mtime_ns, info.st_size)
            except OSError:
                stats[str(file)] = _MISSING
    return stats


def _stat_lines(stats: dict[str, _Stat]) -> list[str]:
    return [f"{name}\0{mtime}\0{size}" for name, (mtime, size) in sorted(stats.items())]


def _digest(parts: Iterable[str]) -> str:
    hasher = hashlib.sha256()
    for part in parts:
        hasher.update(part.encode("utf-8", "surrogateescape"))
        hasher.update(b"\n")
    return hasher.hexdigest()[:16]


def _segment(file: Path, stats: dict[str, _Stat], store: SegmentStore, previous: KnowledgeBase | None) -> Segment:
    """The previous load's segment of an unchanged file, else the store's (cached or built)."""
    kept = previous._segment_of(str(file), stats.get(str(file), _MISSING)) if previous is not None else None
    if kept is not None:
        return kept
    earlier = previous._stored.segments.get(str(file)) if previous is not None and previous._stored else None
    return store.segment(file, earlier)


def _diagnostics(files: Sequence[Path], segments: Mapping[str, Segment], table: UnitTable) -> list[Diagnostic]:
    """Each file's problems together and in line order, duplicate ids included."""
    diagnostics = [d for file in files for d in segments[str(file)].diagnostics]
    ordered = {str(file): index for index, file in enumerate(files)}
    return sorted([*diagnostics, *_duplicates(table)], key=lambda d: (ordered.get(d.file, -1), d.line, d.col))


def _duplicates(table: UnitTable) -> list[Diagnostic]:
    """Only the first unit of each id is kept; every later one is an error naming both places."""
    return [
        _duplicate(table.unit(int(row)), table.unit(table.row_of[table.ids[row]]))
        for row in np.flatnonzero(~table.live)
    ]


def _duplicate(unit: KnowledgeUnit, earlier: KnowledgeUnit) -> Diagnostic:
    where = f"{earlier.location.file}:{earlier.location.line}" if earlier.location else "an earlier unit"
    return Diagnostic(
        code=Code.DUPLICATE_UNIT_ID,
        message=f"unit id {unit.id!r} is already defined; first defined at {where}",
        file=unit.location.file if unit.location else "<memory>",
        line=unit.location.line if unit.location else 1,
    )
