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

from core.cnl import FOLDER_SUFFIXES
from core.diagnostics import Code, Diagnostic, Severity
from core.store import Segment, SegmentStore, default_store
from core.store.segment import unit_digest
from core.store.stored import StoredKb
from core.units import Caller, CallerKey, KnowledgeUnit

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

    __slots__ = ("_base", "_by_file", "_by_id", "_caller", "_extra", "_key", "_stored", "_units", "_version")

    def __init__(
        self,
        units: Iterable[KnowledgeUnit],
        key: ViewKey,
        caller: Caller,
        stored: StoredKb | None = None,
        base: KBView | None = None,
        extra: tuple[KnowledgeUnit, ...] = (),
    ):
        self._units = tuple(sorted(units, key=lambda unit: unit.id))
        self._by_id = {unit.id: unit for unit in self._units}
        self._key = key
        self._caller = caller
        self._version: str | None = None
        self._stored = stored
        self._base = base
        self._extra = extra
        self._by_file: dict[str, tuple[KnowledgeUnit, ...]] | None = None

    def in_file(self, file: str) -> tuple[KnowledgeUnit, ...]:
        """The view's units read from `file`, in reading order (line, column); built on first use."""
        if self._by_file is None:
            grouped: dict[str, list[KnowledgeUnit]] = {}
            for unit in self._units:
                if unit.location is not None:
                    grouped.setdefault(unit.location.file, []).append(unit)
            self._by_file = {
                name: tuple(sorted(units, key=lambda u: (u.location.line, u.location.col, u.id)))  # type: ignore[union-attr]
                for name, units in grouped.items()
            }
        return self._by_file.get(file, ())

    @property
    def base(self) -> KBView | None:
        """The view this one extends with current-turn units (None for a caller's plain view)."""
        return self._base

    @property
    def extra(self) -> tuple[KnowledgeUnit, ...]:
        """The current-turn units added to `base`, which indexes score in a side index."""
        return self._extra

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
            # Per-unit digests come from the segments when stored: hashing a 100k-unit view's
            # JSON again would cost a second on the first question.
            stored = self._stored.unit_digests(self._units) if self._stored is not None else None
            digests = stored if stored is not None else [unit_digest(unit) for unit in self._units]
            self._version = hashlib.sha256(b"".join(digests)).hexdigest()[:16]
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

    def tokens(self) -> Tokens | None:
        """The stored token ids of exactly this view's units, or None when BM25 must tokenise."""
        return self._stored.tokens(self._units) if self._stored is not None else None

    def bm25_parts(self, config: Bm25Config, cache: PartCache) -> list[Bm25Index] | None:
        """This view's BM25 as one part per KB file (None when the KB has no stored segments)."""
        return self._stored.bm25_parts(self._units, config, cache) if self._stored is not None else None

    def merged_bm25(self, config: Bm25Config, build: bool) -> Bm25Index | None:
        """One BM25 index over this view from the cache (or built and saved when `build`)."""
        return self._stored.merged_bm25(self._units, config, build) if self._stored is not None else None

    @property
    def stored(self) -> StoredKb | None:
        """The KB's segments (None for a KB built in memory): where unit vectors are kept."""
        return self._stored

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
        key = (version, caller, _digest([earlier, digest]))
        view = KBView((), key, self._caller, self._stored, self._base or self, (*self._extra, *extra))
        # Per request at up to 1M units: insert the few extras into the sorted tuple and copy the
        # id map, rather than sorting and mapping every unit again.
        units = list(self._units)
        for unit in extra:
            bisect.insort(units, unit, key=_unit_id)
        view._units = tuple(units)
        view._by_id = {**self._by_id, **{unit.id: unit for unit in extra}}
        return view


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
        segments: Mapping[str, Segment] | None = None,
        store: SegmentStore | None = None,
    ):
        self._paths = tuple(paths)
        self._files = tuple(files)
        self._units = tuple(sorted(units, key=lambda unit: unit.id))
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
        units, read_diagnostics = _join(files, segments)
        notes = store.take_notes()
        store.prune()
        version = _digest(_stat_lines(stats))
        return cls(paths, files, units, [*diagnostics, *read_diagnostics, *notes], version, stats, segments, store)

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
        return KnowledgeBase(
            self._paths, self._files, self._units, [*self._diagnostics, *notes], self._version, self._stats,
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
                view = KBView((unit for unit in self._units if visible_to(unit, caller)), key, caller, self._stored)
                self._views[key] = view
                if len(self._views) > _MAX_CACHED_VIEWS:
                    self._views.popitem(last=False)
            else:
                self._views.move_to_end(key)
            return view


def _unit_id(unit: KnowledgeUnit) -> str:
    return unit.id


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
    return kept if kept is not None else store.segment(file)


def _join(files: Sequence[Path], segments: Mapping[str, Segment]) -> tuple[list[KnowledgeUnit], list[Diagnostic]]:
    per_file = []
    diagnostics: list[Diagnostic] = []
    for file in files:
        segment = segments[str(file)]
        per_file.append(list(segment.units))
        diagnostics.extend(segment.diagnostics)
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
