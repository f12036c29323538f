"""Unit vectors kept in the index store, per segment: HDC field vectors of every encoding and the
dense lane's embeddings, so a second run encodes or embeds nothing and an edit costs one file.

Layout: `<segment folder>/vectors/<kind>-<options digest>/` holding `meta.json` and one
`<sha256>.npy` per array, named after its bytes. The options are everything that changes the
vectors (HDC: seed, dimensions, claim windows, character n-grams, the learned model's digest and
the encoder's source; dense: the endpoint's model, the text sent per unit and its cut-off; the
dimension is recorded in the arrays' shapes). Rows follow the segment's units.

Writing: arrays first (each through a temp file and `os.replace`), then `meta.json` the same
way, so the set a reader sees is the old one or the new one, never half of each. Reading checks
the meta's format, kind, options and unit count, every array's CRC-32 against the meta's (a
streaming read, twice as fast as SHA-256 on this machine: the HDC sets are ~1 GB at 1M units),
and its shape and dtype, then memory-maps it. A set that fails any check (truncated, corrupt,
foreign) is removed and rebuilt with an `INDEX_CACHE` warning.

The segment's own folder is keyed by the file's content, so an edited file gets a new folder
(the store removes the old one) and only its vectors are built again.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import threading
import time
import weakref
import zlib
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.store.atomic import replace_file
from core.store.mapped import Damaged, read_array
from core.store.private import private_dirs
from core.store.segment import Segment
from core.store.store import SegmentStore

FORMAT = 2
FOLDER = "vectors"
META = "meta.json"
# Learned HDC models differ per view, so a segment can hold several HDC sets; the oldest go first.
MAX_SETS_PER_KIND = 3
STALE_SECONDS = 3600
Arrays = dict[str, np.ndarray]


@dataclass(frozen=True)
class VectorKey:
    """Which vectors a set holds: `kind` ("hdc", "dense") and the options that shape them."""

    kind: str
    options: Mapping[str, object]

    @property
    def name(self) -> str:
        text = json.dumps({"kind": self.kind, **self.options}, sort_keys=True)
        return f"{self.kind}-{hashlib.sha256(text.encode()).hexdigest()[:20]}"


class VectorSetError(Exception):
    """A stored set that cannot be used; the message says why."""


class SegmentVectors:
    """The vector sets in one store's segment folders; `built[kind]` counts units built.

    Sets read or built in this process stay in memory (one per file and kind), so views of
    the same KB neither re-read nor re-verify them.
    """

    def __init__(self, store: SegmentStore):
        self.store = store
        self.built: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._memory: dict[tuple[str, str], tuple[str, str, Arrays]] = {}
        self._unwritable = False

    def get(self, segment: Segment, key: VectorKey, complete: Callable[[Arrays | None], Arrays]) -> Arrays:
        """The set `key` of `segment`, from memory or disk, passed through `complete`, which
        returns it unchanged when it covers what the caller needs, else a new set (built from
        nothing, or the stored one extended) that is then saved."""
        arrays = self._remembered(segment, key)
        if arrays is None:
            arrays = self.read(segment, key)
        fresh = complete(arrays)
        if fresh is not arrays:
            self.write(segment, key, fresh)
        return self._remember(segment, key, fresh)

    def read(self, segment: Segment, key: VectorKey) -> Arrays | None:
        folder = self._set_folder(segment, key)
        # No meta yet: another process is writing the set, or one died doing so; never published.
        if folder is None or not (folder / META).is_file():
            return None
        try:
            return _load_set(folder, key, len(segment.units))
        except VectorSetError as exc:
            self.store.note(
                str(folder), f"stored {key.kind} vectors of {segment.file} were unusable ({exc}); rebuilt them"
            )
            shutil.rmtree(folder, ignore_errors=True)
            return None

    def write(self, segment: Segment, key: VectorKey, arrays: Arrays) -> None:
        folder = self._set_folder(segment, key)
        if folder is None or self._unwritable or not folder.parent.parent.is_dir():
            return
        try:
            private_dirs(folder, self.store.root)
            old = _referenced(folder)
            entries = {name: _write_array(folder, array) for name, array in arrays.items()}
            meta = {"format": FORMAT, "kind": key.kind, "options": dict(key.options), "units": len(segment.units)}
            replace_file(folder / META, json.dumps({**meta, "arrays": entries}, sort_keys=True).encode())
        except OSError as exc:
            # Said once: a read-only or full cache would otherwise warn for every file.
            with self._lock:
                first, self._unwritable = not self._unwritable, True
            if first:
                self.store.note(str(folder), f"cannot write unit vectors ({exc}); this process keeps them in memory")
            return
        _remove_unreferenced(folder, old, {entry["file"] for entry in entries.values()})
        _keep_newest_sets(folder.parent, key.kind, MAX_SETS_PER_KIND)

    def discard(self, segment: Segment, key: VectorKey) -> None:
        """Forget a set (on disk and in memory): the endpoint's vectors no longer match it."""
        with self._lock:
            self._memory.pop((segment.file, key.kind), None)
        folder = self._set_folder(segment, key)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    def forget_all(self) -> None:
        """Drop every set kept in memory (their files changed under this process)."""
        with self._lock:
            self._memory.clear()

    def count(self, kind: str, units: int) -> None:
        with self._lock:
            self.built[kind] += units

    def _set_folder(self, segment: Segment, key: VectorKey) -> Path | None:
        folder = self.store.folder_of(segment)
        return None if folder is None else folder / FOLDER / key.name

    def _remembered(self, segment: Segment, key: VectorKey) -> Arrays | None:
        with self._lock:
            entry = self._memory.get((segment.file, key.kind))
        return entry[2] if entry is not None and entry[:2] == (segment.key, key.name) else None

    def _remember(self, segment: Segment, key: VectorKey, arrays: Arrays) -> Arrays:
        with self._lock:
            self._memory[(segment.file, key.kind)] = (segment.key, key.name, arrays)
        return arrays


_REGISTRY: weakref.WeakKeyDictionary[SegmentStore, SegmentVectors] = weakref.WeakKeyDictionary()
_REGISTRY_LOCK = threading.Lock()


def vectors_of(store: SegmentStore) -> SegmentVectors:
    """The store's vector sets (one `SegmentVectors` per store, made on first use)."""
    with _REGISTRY_LOCK:
        vectors = _REGISTRY.get(store)
        if vectors is None:
            vectors = _REGISTRY[store] = SegmentVectors(store)
        return vectors


# --- the listing `mrptui cache info` prints ----------------------------------------------------


@dataclass(frozen=True)
class SetInfo:
    """One stored vector set of a KB path, as its meta describes it."""

    kind: str
    bytes: int
    units: int
    shape: tuple[int, ...]


def set_infos(path_folder: Path) -> list[SetInfo]:
    """The vector sets under one KB path's segment folder (every key), as their metas describe them."""
    infos = []
    for meta_path in sorted(path_folder.glob(f"*/{FOLDER}/*/{META}")):
        try:
            meta = json.loads(meta_path.read_bytes())
            files = [meta_path.parent / entry["file"] for entry in meta["arrays"].values()]
            size = sum(f.stat().st_size for f in files) + meta_path.stat().st_size
            main: dict = meta["arrays"].get("vectors") or next(iter(meta["arrays"].values()), {"shape": []})
            infos.append(SetInfo(str(meta["kind"]), size, int(meta["units"]), tuple(main["shape"])))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return infos


# --- files ------------------------------------------------------------------------------------


def _write_array(folder: Path, array: np.ndarray) -> dict:
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array), allow_pickle=False)
    data = buffer.getvalue()
    name = f"{hashlib.sha256(data).hexdigest()[:32]}.npy"
    if not (folder / name).is_file():
        replace_file(folder / name, data)
    return {"file": name, "shape": list(array.shape), "dtype": array.dtype.str, "crc32": zlib.crc32(data)}


def _crc_is(crc: int) -> Callable[[bytes | memoryview], bool]:
    return lambda data: zlib.crc32(data) == crc


def _load_set(folder: Path, key: VectorKey, units: int) -> Arrays:
    try:
        meta = json.loads((folder / META).read_bytes())
    except (OSError, ValueError) as exc:
        raise VectorSetError(f"meta.json unreadable: {exc}") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("kind") != key.kind:
        raise VectorSetError(f"format {meta.get('format') if isinstance(meta, dict) else '?'!r}, expected {FORMAT}")
    if meta.get("options") != json.loads(json.dumps(dict(key.options))):
        raise VectorSetError("made with other options")
    if meta.get("units") != units:
        raise VectorSetError(f"{meta.get('units')} rows for {units} units")
    arrays: Arrays = {}
    try:
        for name, entry in meta["arrays"].items():
            crc = entry["crc32"]
            array = read_array(folder / entry["file"], _crc_is(crc))
            if list(array.shape) != entry["shape"] or array.dtype.str != entry["dtype"]:
                raise VectorSetError(f"{name} has shape {array.shape}, expected {tuple(entry['shape'])}")
            arrays[name] = array
    except Damaged as exc:
        raise VectorSetError(f"{name} does not match its checksum") from exc
    except VectorSetError:
        raise
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise VectorSetError(f"unreadable: {exc}") from None
    return arrays


def _referenced(folder: Path) -> set[str]:
    try:
        meta = json.loads((folder / META).read_bytes())
        return {str(entry["file"]) for entry in meta["arrays"].values()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return set()


def _remove_unreferenced(folder: Path, previous: set[str], current: set[str]) -> None:
    """Arrays the previous meta named, and orphans of writers that died long ago (a recent
    unreferenced file may be another process's set in the making)."""
    now = time.time()
    for path in folder.glob("*.npy"):
        if path.name in current:
            continue
        try:
            orphaned = now - path.stat().st_mtime > STALE_SECONDS
        except OSError:
            continue
        if path.name in previous or orphaned:
            path.unlink(missing_ok=True)


def _keep_newest_sets(parent: Path, kind: str, count: int) -> None:
    def written(folder: Path) -> float:
        try:
            return (folder / META).stat().st_mtime
        except OSError:
            return 0.0

    sets = sorted(parent.glob(f"{kind}-*"), key=written, reverse=True)
    for stale in sets[count:]:
        shutil.rmtree(stale, ignore_errors=True)
