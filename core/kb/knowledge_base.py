"""The knowledge base: units loaded from files and folders, and the permitted view per caller.

A `KnowledgeBase` is immutable: reloading builds a new one, so a query running on the old
object never sees a mix of old and new units. Every backend ranks a `KBView` (core/kb/view.py),
which holds only the units the caller may see.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from core.cnl import FOLDER_SUFFIXES
from core.infra.config import KbBudgets
from core.infra.diagnostics import Code, Diagnostic, Severity
from core.infra.progress import Estimate, LoadProgress, Progress, ignore
from core.kb.budgets import UnitCount, check_scan
from core.kb.unit_table import RowUnits, UnitTable, permitted
from core.kb.view import KBView, ViewKey, digest_lines
from core.kb.walk import IGNORED_FILE_NAMES, MISSING, bad_name, is_ignored_name, is_utf8_name, walk_kb
from core.kb.withdrawal import withdrawal_notes
from core.store import Segment, SegmentStore, default_store
from core.store.groups import FileGroup, Source, members, plan_groups
from core.store.source_files import source_stat
from core.store.stored import Prefetched, StoredKb, prefetch_whole_part
from core.units import Caller, KnowledgeUnit, is_public

if TYPE_CHECKING:
    from core.infra.config import Bm25Config, HdcConfig

__all__ = ["IGNORED_FILE_NAMES", "is_ignored_name", "KBView", "KnowledgeBase", "ViewKey", "visible_to"]

_MAX_CACHED_VIEWS = 8
# (mtime_ns, size, inode, ctime_ns) of a scanned file; a path that could not be stat-ed gets
# _MISSING. ctime catches what keeps size and mtime: a chmod that makes a file unreadable, a
# file replaced by another with the same times.
_Stat = tuple[int, int, int, int]
_MISSING: _Stat = MISSING


def visible_to(unit: KnowledgeUnit, caller: Caller) -> bool:
    """The permission rule (`permitted`) applied to one unit."""
    return permitted((unit.acl, unit.region, unit.effective_from, unit.effective_to), caller)


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
        prefetched: Prefetched | None = None,
        groups: Mapping[str, tuple[Path, ...]] | None = None,
    ):
        self._paths = tuple(paths)
        self._files = tuple(files)
        self._table = table
        self._units: tuple[KnowledgeUnit, ...] | None = None
        self._diagnostics = tuple(diagnostics)
        self._version = version
        self._stats = dict(stats)
        self._budgets = KbBudgets()  # what `load` opened it under, which its reloads keep
        self._views: OrderedDict[ViewKey, KBView] = OrderedDict()
        self._views_lock = threading.Lock()
        self._stored = StoredKb(segments, store, prefetched) if segments and store is not None else None
        self._store = store
        # Each group's files (core/store/groups.py), by the group's name.
        self._groups = dict(groups or {})

    @classmethod
    def load(
        cls,
        paths: Sequence[Path],
        store: SegmentStore | None = None,
        previous: KnowledgeBase | None = None,
        hdc: HdcConfig | None = None,
        progress: Progress | None = None,
        bm25: Bm25Config | None = None,
        budgets: KbBudgets | None = None,
    ) -> KnowledgeBase:
        """Read files and folders (recursively; `.md`, `.cnl`, `.txt`, `.nl`; `.jsonl` only when named)
        in a fixed order.

        Folders skip hidden entries, `queries.json` and other extensions; a file named
        explicitly must have a supported extension. Bad input is a diagnostic, never raised, except
        a KB past a whole-KB budget (core/kb/budgets.py): `OverBudget` names it, on a reload too.
        Each file's segment comes from `previous` when the file's stat is unchanged, else from
        `store` (the index cache; default: the one the environment names), which reads or builds it.
        On a first load, uncached files are built by worker processes (core/store/pool.py), with
        their HDC vectors when `hdc` is given and each file's whole BM25 part when `bm25` is.
        `progress` hears once per file (core/infra/progress.py); if it raises, the load stops there.
        `budgets` (retrieval.json's `inputs`; default: `previous`'s, else the defaults) stay with the
        KB for its reloads.
        """
        store = store if store is not None else default_store()
        paths = [Path(path) for path in paths]
        # Stat before reading: a file changed during the load then differs from the recorded
        # stat, and the next poll reloads it.
        walks: dict[Path, tuple[list[Path], list[Diagnostic]]] = {}
        stats = _scan(paths, walks)
        diagnostics: list[Diagnostic] = []
        files: list[Path] = []
        for path in paths:
            if not is_utf8_name(path):
                diagnostics.append(bad_name(path))
            elif not _exists(path):
                diagnostics.append(
                    Diagnostic(code=Code.PATH_NOT_FOUND, message="no such file or directory", file=str(path))
                )
            elif os.path.isdir(path):
                found, problems = walks.get(path) or walk_kb(path)
                files.extend(found)
                diagnostics.extend(problems)
            else:
                files.append(path)
        unique: dict[str, Path] = {}
        for file in files:
            unique.setdefault(str(file), file)  # by name: hashing Paths cost ~1 s at 50,000 files
        files = list(unique.values())
        budgets = budgets or (previous._budgets if previous is not None else KbBudgets())
        check_scan(files, stats, budgets)
        counted = UnitCount(budgets)
        report = progress or ignore
        report(LoadProgress("scanning", 0, len(files)))
        pooled = 0
        # Segments (and whole-file BM25 parts) the pool's workers published while others still
        # built, read meanwhile.
        early: dict[str, Segment] = {}
        parts: Prefetched = {}
        sources = plan_groups(files, stats)
        if previous is None:
            from core.store.pool import prebuild  # multiprocessing only on a first load

            def read_built(file: Path) -> None:
                segment = early[str(file)] = store.segment(file)
                counted.add(str(file), len(segment.units), file)
                if bm25 is not None:
                    prefetch_whole_part(store, segment, bm25, parts)

            # Groups of small files are read here: a worker per small file costs more than it saves.
            singles = [source for source in sources if isinstance(source, Path)]
            pooled = prebuild(singles, store, hdc, bm25, progress=report, built=read_built)
        segments = _segments(sources, stats, store, previous, report, early, counted)
        table = UnitTable(
            [(segment.units, segment.columns) for segment in segments.values()],
            previous._table if previous is not None else None,
        )
        read_diagnostics = _diagnostics(files, segments, table)
        if previous is not None:
            read_diagnostics += _now_folders(previous._files, files)
        notes = store.take_notes()
        if pooled:  # the workers' writes are not this store's own
            store.prune()
        else:
            store.prune_after_writes()
        version = digest_lines(_stat_lines(stats))
        groups = {source.name: source.files for source in sources if isinstance(source, FileGroup)}
        kb = cls(
            paths,
            files,
            table,
            [*diagnostics, *read_diagnostics, *notes],
            version,
            stats,
            segments,
            store,
            parts,
            groups,
        )
        kb._budgets = budgets
        return kb

    @classmethod
    def from_units(cls, units: Iterable[KnowledgeUnit], diagnostics: Iterable[Diagnostic] = ()) -> KnowledgeBase:
        """A KB of units built in memory (tests, benchmarks); its version hashes their content."""
        table = UnitTable.of_units(tuple(units))
        return cls(
            (),
            (),
            table,
            [*diagnostics, *_duplicates(table)],
            digest_lines(u.model_dump_json() for u in RowUnits(table, table.order)),
            {},
        )

    @staticmethod
    def fingerprint_of(paths: Sequence[Path]) -> str:
        """A cheap stat-based digest of the KB files under `paths`; it changes when any of them does."""
        return digest_lines(_stat_lines(_scan([Path(path) for path in paths])))

    @staticmethod
    def stat_files(paths: Sequence[Path]) -> tuple[str, tuple[Path, ...]]:
        """`fingerprint_of(paths)` (the version a load would give the KB) and the files it
        stated, found without reading any of them."""
        stats = _scan([Path(path) for path in paths])
        return digest_lines(_stat_lines(stats)), tuple(Path(name) for name in stats)

    @property
    def paths(self) -> tuple[Path, ...]:
        return self._paths

    @property
    def files(self) -> tuple[Path, ...]:
        """The files read, in load order (also those that produced only diagnostics)."""
        return self._files

    @property
    def units(self) -> tuple[KnowledgeUnit, ...]:
        """Every loaded unit, restricted ones and every unit of a clashing id included, in id
        order. Rank a `view()` instead.

        Restores every unit: for checks and evaluation, not for the open or query path."""
        if self._units is None:
            self._units = tuple(RowUnits(self._table, self._table.order))
        return self._units

    def each_unit(self) -> Iterator[KnowledgeUnit]:
        """Every loaded unit in `units`' order, restored one at a time and not kept: a pass over
        the whole KB (cutting it into shards) must not end up holding it all."""
        units = RowUnits(self._table, self._table.order)
        return (units.peek(index) for index in range(len(units)))

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
        return self.load(self._paths, self._store, previous=self)

    @property
    def store(self) -> SegmentStore | None:
        """The index cache this KB was loaded with, which its reloads use too (None for a KB built
        in memory)."""
        return self._store

    def rebuilt(self) -> KnowledgeBase:
        """A fresh load from the same paths and store that keeps no segment of this one: cache
        files this KB maps changed under it (`Session` checks before each question)."""
        return self.load(self._paths, self.store, budgets=self._budgets)

    def _segment_of(self, source: Source, stats: Mapping[str, _Stat]) -> Segment | None:
        """This load's segment of a file (or group of files), if each file's stat is still the one in `stats`."""
        if self._stored is None or (isinstance(source, FileGroup) and self._groups.get(source.name) != source.files):
            return None
        for file in members(source):
            stat = stats.get(str(file), _MISSING)
            if stat == _MISSING or self._stats.get(str(file)) != stat:
                return None
        return self._stored.segments.get(str(source))

    def failing_closed(self, previous: KnowledgeBase) -> KnowledgeBase:
        """This KB after a reload from `previous`: a unit whose file now has errors and that the
        file no longer yields is withdrawn for every caller, with a warning naming the file
        (core/kb/withdrawal.py says why never the last good version)."""
        notes = withdrawal_notes(previous._table, previous.diagnostics, self._diagnostics, self._table.row_of)
        if not notes:
            return self
        return KnowledgeBase(
            self._paths,
            self._files,
            self._table,
            [*self._diagnostics, *notes],
            self._version,
            self._stats,
            self._stored.segments if self._stored else None,
            self._stored.store if self._stored else None,
            groups=self._groups,
        )

    def holds(self, path: Path) -> bool:
        """Whether `path` is one of this KB's files, or a KB-format file inside one of its folders:
        a file a reload would read, which no export or trace may create or replace."""
        return holds(self._paths, self._files, path)

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


def holds(paths: Sequence[Path], files: Sequence[Path], path: Path) -> bool:
    """Whether `path` is one of `files`, or a KB-format file inside one of the folders `paths`."""
    target = _real(path)
    if any(target == _real(file) for file in files):
        return True
    if os.path.splitext(target.name)[1].lower() not in FOLDER_SUFFIXES:
        return False
    return any(folder.is_dir() and target.is_relative_to(_real(folder)) for folder in paths)


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _exists(path: Path) -> bool:
    # os.path answers False where Path.exists raises (a parent folder that cannot be searched).
    return os.path.lexists(path)


def _scan(
    paths: Sequence[Path], walks: dict[Path, tuple[list[Path], list[Diagnostic]]] | None = None
) -> dict[str, _Stat]:
    """Stat every KB file under `paths` (and each explicitly named path, whatever its type); each
    folder's walk goes into `walks` when given, for the load that scans to reuse."""
    stats: dict[str, _Stat] = {}
    for path in paths:
        if os.path.isdir(path):
            walked = walk_kb(path, stats)
            if walks is not None:
                walks[path] = walked
        elif is_utf8_name(path):
            try:
                info = os.stat(path)
                stats[str(path)] = (info.st_mtime_ns, info.st_size, info.st_ino, info.st_ctime_ns)
            except OSError:
                stats[str(path)] = _MISSING
    return stats


def _stat_lines(stats: dict[str, _Stat]) -> list[str]:
    return [f"{name}\0{mtime}\0{size}\0{inode}\0{ctime}" for name, (mtime, size, inode, ctime) in sorted(stats.items())]


def _segments(
    sources: Sequence[Source],
    stats: dict[str, _Stat],
    store: SegmentStore,
    previous: KnowledgeBase | None,
    report: Progress,
    early: Mapping[str, Segment],
    counted: UnitCount,
) -> dict[str, Segment]:
    """Each source's segment, by the source's name (a file's, or a group's); `counted` refuses
    the KB at the source whose units pass `inputs.maxKbUnits`."""
    segments: dict[str, Segment] = {}
    units = done = 0
    total = sum(len(members(source)) for source in sources)
    estimate = Estimate(total)
    for source in sources:
        segment = segments[str(source)] = early.get(str(source)) or _segment(source, stats, store, previous)
        units += len(segment.units)
        counted.add(str(source), len(segment.units), members(source)[-1])
        done += len(members(source))
        estimate.advance(len(members(source)))
        report(LoadProgress("reading", done, total, units, estimate.left()))
    return segments


def _segment(source: Source, stats: dict[str, _Stat], store: SegmentStore, previous: KnowledgeBase | None) -> Segment:
    """The previous load's segment of an unchanged file or group, else the store's (cached or built)."""
    kept = previous._segment_of(source, stats) if previous is not None else None
    if kept is not None:
        return kept
    earlier = previous._stored.segments.get(str(source)) if previous is not None and previous._stored else None
    return store.segment(source, earlier, source_stat(source, stats))


def _now_folders(before: Sequence[Path], now: Sequence[Path]) -> list[Diagnostic]:
    """A KB file replaced by a folder while the KB was open: its units leave the view (as for a
    deleted file), and the author is told why, once, at the reload that noticed."""
    kept = set(now)
    return [
        Diagnostic(
            code=Code.FILE_UNREADABLE,
            message="was a KB file and is now a folder; its units are no longer read",
            file=str(file),
            severity=Severity.WARNING,
        )
        for file in before
        if file not in kept and os.path.isdir(file)
    ]


def _diagnostics(files: Sequence[Path], segments: Mapping[str, Segment], table: UnitTable) -> list[Diagnostic]:
    """Each file's problems together and in line order, duplicate ids included."""
    diagnostics = [d for segment in segments.values() for d in segment.diagnostics]
    ordered = {str(file): index for index, file in enumerate(files)}
    return sorted([*diagnostics, *_duplicates(table)], key=lambda d: (ordered.get(d.file, -1), d.line, d.col))


def _duplicates(table: UnitTable) -> list[Diagnostic]:
    """Every later unit of an id is an error naming both places; which unit each caller is served,
    if any, is decided per view (`UnitTable.permitted_mask`)."""
    return [
        _duplicate(table.unit(int(row)), table.unit(table.row_of[table.ids[row]]))
        for row in np.flatnonzero(~table.live)
    ]


def _duplicate(unit: KnowledgeUnit, earlier: KnowledgeUnit) -> Diagnostic:
    where = f"{earlier.location.file}:{earlier.location.line}" if earlier.location else "an earlier unit"
    return Diagnostic(
        code=Code.DUPLICATE_UNIT_ID,
        message=f"unit id {unit.id!r} is already defined; first defined at {where}; "
        "a caller who may see both is served neither until one is renamed or removed",
        file=unit.location.file if unit.location else "<memory>",
        line=unit.location.line if unit.location else 1,
        author_only=not (is_public(unit) and is_public(earlier)),
    )
