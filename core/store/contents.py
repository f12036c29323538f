"""What the cache folder holds, for `mrptui cache info|clear` and the store's size bound: one
entry per KB path's segment folder, the merged view indexes, and clearing all of it."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

from core.store.arrays import INDEX_SUFFIX, folder_bytes
from core.store.atomic import TEMP_FOLDER
from core.store.private import KEY_FILE

STEMS_FILE = "stems.json"
# Per KB path, `<root>/sources/<path digest>.json`: the key its file had at a recorded stat
# (see core/store/key_records.py); kept apart so a path's folder holds only its segment.
SOURCES = "sources"


class CacheEntry:
    """One KB path's segment folder in the cache: its source file, size and last write time."""

    def __init__(self, folder: Path):
        self.folder = folder
        # Another process may publish or remove a segment while we walk: a file that vanishes
        # mid-walk is simply not counted.
        infos = dict(_walk_files(folder))
        self.bytes = sum(info.st_size for info in infos.values())
        self.written = max((info.st_mtime for info in infos.values()), default=0.0)
        metas = [p for p in infos if p.name == "meta.json"]
        self.source = _source_of(metas[0]) if metas else "?"


def _walk_files(folder: Path):
    """(path, stat) of the regular files under `folder`, skipping what disappears meanwhile."""
    for root, _dirs, names in os.walk(folder):
        for name in names:
            path = Path(root) / name
            try:
                info = path.stat()
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                yield path, info


def cache_entries(root: Path | None) -> list[CacheEntry]:
    folder = root / "segments" if root is not None else None
    if folder is None or not folder.is_dir():
        return []
    try:
        names = sorted(folder.iterdir())
    except OSError:
        return []
    return [CacheEntry(entry) for entry in names if entry.is_dir()]


def prune_cache(root: Path | None, max_bytes: int) -> int:
    """Drop the least recently written paths' segments until the cache fits `max_bytes`; the
    bytes its segments hold after."""
    entries = cache_entries(root)
    total = sum(entry.bytes for entry in entries)
    for entry in sorted(entries, key=lambda e: e.written):
        if total <= max_bytes:
            break
        shutil.rmtree(entry.folder, ignore_errors=True)
        total -= entry.bytes
    return total


# KB sentences' part-of-speech tags (core/nlp/tag_store.py), outside the size bound.
TAGS = "tags"
# The shipped NLP data unpacked (core/nlp/unpacked.py), outside the size bound.
NLP = "nlp"


def view_files(root: Path) -> list[Path]:
    """Merged whole-view BM25 index folders (at most `MAX_VIEW_FILES`, outside the size bound)."""
    return sorted((root / "views").glob(f"*{INDEX_SUFFIX}")) if (root / "views").is_dir() else []


class ClearResult:
    """What `clear_cache` freed, and every path it could not remove (empty when all went)."""

    def __init__(self, freed: int, failures: list[tuple[str, str]]):
        self.freed = freed
        self.failures = failures


def clear_cache(root: Path) -> ClearResult:
    """Remove everything the store wrote under `root`, going on past what cannot be removed.

    The key goes first: a segment left behind (a read-only folder, a busy mount) then no longer
    verifies under the key the next open makes, so it is rebuilt, never served. A key that cannot
    be removed raises OSError before anything else is touched (a read-only cache stays whole and
    trusted rather than half-removed); so does a root that is a file."""
    if root.exists() and not root.is_dir():
        raise NotADirectoryError(20, "not a folder", str(root))
    before = _stored_bytes(root)
    failures: list[tuple[str, str]] = []

    def failed(_function, path, exc_info) -> None:
        failures.append((str(path), exc_info[1].strerror or str(exc_info[1])))

    (root / KEY_FILE).unlink(missing_ok=True)
    try:
        (root / STEMS_FILE).unlink(missing_ok=True)
    except OSError as exc:
        failures.append((str(root / STEMS_FILE), exc.strerror or str(exc)))
    for name in ("segments", "views", SOURCES, TAGS, NLP, TEMP_FOLDER):
        if (root / name).exists():
            shutil.rmtree(root / name, onerror=failed)
    return ClearResult(max(0, before - _stored_bytes(root)), failures)


def _stored_bytes(root: Path) -> int:
    extra = sum(folder_bytes(root / name) for name in (TAGS, NLP) if (root / name).is_dir())
    return sum(entry.bytes for entry in cache_entries(root)) + sum(map(folder_bytes, view_files(root))) + extra


def _source_of(meta: Path) -> str:
    try:
        return str(json.loads(meta.read_bytes()).get("file", "?"))
    except (OSError, ValueError):
        return "?"
