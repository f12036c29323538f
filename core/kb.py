"""The knowledge base: units loaded from files and folders, and the permitted view per caller.

A `KnowledgeBase` is immutable: reloading builds a new one, so a query running on the old
object never sees a mix of old and new units. Every backend ranks a `KBView`, which holds only
the units the caller may see; restricted units are absent from it, not flagged, so nothing
built on a view can reveal them.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from core.cnl import SUFFIX_FORMATS, read_file
from core.diagnostics import Code, Diagnostic, Severity
from core.units import Caller, CallerKey, KnowledgeUnit

IGNORED_FILE_NAMES = frozenset({"queries.json"})
_MAX_CACHED_VIEWS = 8
# (mtime_ns, size) of a scanned file; a path that could not be stat-ed gets _MISSING.
_Stat = tuple[int, int]
_MISSING: _Stat = (-1, -1)
# KB version, the caller's value, and a digest of the request's own units ("" when none).
ViewKey = tuple[str, CallerKey, str]


def visible_to(unit: KnowledgeUnit, caller: Caller) -> bool:
    """The permission rule: Acl needs a shared tag, Region an equal region, dates must include as-of."""
    if unit.acl and not caller.tags.intersection(unit.acl):
        return False
    if unit.region is not None and (caller.region or "").casefold() != unit.region.casefold():
        return False
    if unit.effective_from is not None and caller.as_of < unit.effective_from:
        return False
    return unit.effective_to is None or caller.as_of <= unit.effective_to


class KBView:
    """The units one caller may see, in id order; immutable, and keyed for index caches."""

    __slots__ = ("_by_id", "_caller", "_key", "_units", "_version")

    def __init__(self, units: Iterable[KnowledgeUnit], key: ViewKey, caller: Caller):
        self._units = tuple(sorted(units, key=lambda unit: unit.id))
        self._by_id = {unit.id: unit for unit in self._units}
        self._key = key
        self._caller = caller
        self._version: str | None = None

    @property
    def units(self) -> tuple[KnowledgeUnit, ...]:
        return self._units

    @property
    def key(self) -> ViewKey:
        """KB version, the caller's value and a digest of current-turn units: equal keys, equal units."""
        return self._key

    @property
    def version(self) -> str:
        """A digest of the units in this view: it changes only when what this caller sees changes,
        so a caller cannot learn from it that a unit outside their view was edited."""
        if self._version is None:
            self._version = _digest(unit.model_dump_json() for unit in self._units)
        return self._version

    @property
    def caller(self) -> Caller:
        return self._caller

    def get(self, unit_id: str) -> KnowledgeUnit | None:
        """The unit, or None when it does not exist or the caller may not see it (indistinguishable)."""
        return self._by_id.get(unit_id)

    def __contains__(self, unit_id: object) -> bool:
        return unit_id in self._by_id

    def __len__(self) -> int:
        return len(self._units)

    def __iter__(self) -> Iterator[KnowledgeUnit]:
        return iter(self._units)

    def with_extra(self, units: Iterable[KnowledgeUnit]) -> KBView:
        """A new view with this request's own units added, marked current-turn.

        An extra unit whose id is already in the view is left out: the KB's unit stays, so a
        request cannot replace evidence by reusing its id.
        """
        extra = tuple(unit.model_copy(update={"current_turn": True}) for unit in units if unit.id not in self._by_id)
        if not extra:
            return self
        digest = _digest(unit.model_dump_json() for unit in extra)
        version, caller, earlier = self._key
        return KBView((*self._units, *extra), (version, caller, _digest([earlier, digest])), self._caller)


    def without(self, unit_ids: Iterable[str]) -> KBView:
        """A new view without these units: evidence a user excluded while debugging a run."""
        gone = sorted(set(unit_ids) & self._by_id.keys())
        if not gone:
            return self
        kept = (unit for unit in self._units if unit.id not in gone)
        return KBView(kept, f"{self._key}-{_digest(gone)}", self._caller)


class KnowledgeBase:
    """Units and diagnostics from KB files; build with `load` or `from_units`, never mutate."""

    def __init__(
        self,
        paths: Sequence[Path],
        files: Sequence[Path],
        units: Iterable[KnowledgeUnit],
        diagnostics: Iterable[Diagnostic],
        version: str,
        stats: dict[str, _Stat],
    ):
        self._paths = tuple(paths)
        self._files = tuple(files)
        self._units = tuple(sorted(units, key=lambda unit: unit.id))
        self._diagnostics = tuple(diagnostics)
        self._version = version
        self._stats = dict(stats)
        self._views: OrderedDict[ViewKey, KBView] = OrderedDict()
        self._views_lock = threading.Lock()

    @classmethod
    def load(cls, paths: Sequence[Path]) -> KnowledgeBase:
        """Read files and folders (recursively; `.md`, `.cnl`, `.txt`, `.nl`) in a fixed order.

        Folders skip hidden entries, `queries.json` and other extensions; a file named
        explicitly must have a supported extension. Nothing here raises for bad input.
        """
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
        units, read_diagnostics = _read_all(files)
        return cls(paths, files, units, [*diagnostics, *read_diagnostics], _digest(_stat_lines(stats)), stats)

    @classmethod
    def from_units(cls, units: Iterable[KnowledgeUnit], diagnostics: Iterable[Diagnostic] = ()) -> KnowledgeBase:
        """A KB of units built in memory (tests, benchmarks); its version hashes their content."""
        kept, duplicates = _without_duplicates([list(units)])
        return cls((), (), kept, [*diagnostics, *duplicates], _digest(u.model_dump_json() for u in kept), {})

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
        """Every loaded unit, restricted ones included, in id order. Rank a `view()` instead."""
        return self._units

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
        """A freshly loaded KB from the same paths; this one is left untouched."""
        return self.load(self._paths)

    def failing_closed(self, previous: KnowledgeBase) -> KnowledgeBase:
        """This KB after a reload from `previous`: a unit whose file now has errors and that the
        file no longer yields is withdrawn for every caller, with a warning naming the file.

        Never the last good version: a failed edit may have been the one that restricted the
        unit (an added Acl, a narrower Region or date), so serving the old text could widen
        access. The file's other units are read afresh and stay served; the reader's own errors
        tell the author, at file and line, what to fix.
        """
        broken = {d.file for d in self._diagnostics if d.is_error}
        fresh_ids = {u.id for u in self._units}
        gone = {
            u.location.file for u in previous.units
            if u.location is not None and u.location.file in broken and u.id not in fresh_ids
        }
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
        return KnowledgeBase(self._paths, self._files, self._units, [*self._diagnostics, *notes], self._version, self._stats)

    def holds(self, path: Path) -> bool:
        """Whether `path` is one of this KB's files, or a KB-format file inside one of its folders:
        a file a reload would read, which no export or trace may create or replace."""
        target = _real(path)
        if any(target == _real(file) for file in self._files):
            return True
        if os.path.splitext(target.name)[1].lower() not in SUFFIX_FORMATS:
            return False
        return any(folder.is_dir() and target.is_relative_to(_real(folder)) for folder in self._paths)

    def view(self, caller: Caller) -> KBView:
        """The permitted view for `caller`, built before any ranking; cached per caller."""
        key: ViewKey = (self._version, caller.key, "")
        with self._views_lock:
            view = self._views.get(key)
            if view is None:
                view = KBView((unit for unit in self._units if visible_to(unit, caller)), key, caller)
                self._views[key] = view
                if len(self._views) > _MAX_CACHED_VIEWS:
                    self._views.popitem(last=False)
            else:
                self._views.move_to_end(key)
            return view


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
            and os.path.splitext(name)[1].lower() in SUFFIX_FORMATS
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


def _read_all(files: Sequence[Path]) -> tuple[list[KnowledgeUnit], list[Diagnostic]]:
    per_file = []
    diagnostics: list[Diagnostic] = []
    for file in files:
        units, problems = read_file(file)
        per_file.append(units)
        diagnostics.extend(problems)
    units, duplicates = _without_duplicates(per_file)
    ordered = {str(file): index for index, file in enumerate(files)}
    # Keep each file's problems together and in line order, duplicates included.
    diagnostics = sorted([*diagnostics, *duplicates], key=lambda d: (ordered.get(d.file, -1), d.line, d.col))
    return units, diagnostics


def _without_duplicates(per_file: Iterable[list[KnowledgeUnit]]) -> tuple[list[KnowledgeUnit], list[Diagnostic]]:
    """Keep the first unit of each id; every later one is dropped with an error naming both places."""
    first: dict[str, KnowledgeUnit] = {}
    duplicates: list[Diagnostic] = []
    for units in per_file:
        for unit in units:
            earlier = first.setdefault(unit.id, unit)
            if earlier is not unit:
                duplicates.append(_duplicate(unit, earlier))
    return list(first.values()), duplicates


def _duplicate(unit: KnowledgeUnit, earlier: KnowledgeUnit) -> Diagnostic:
    where = f"{earlier.location.file}:{earlier.location.line}" if earlier.location else "an earlier unit"
    return Diagnostic(
        code=Code.DUPLICATE_UNIT_ID,
        message=f"unit id {unit.id!r} is already defined; first defined at {where}",
        file=unit.location.file if unit.location else "<memory>",
        line=unit.location.line if unit.location else 1,
    )
