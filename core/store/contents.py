"""What the cache folder holds, for `mrptui cache info|clear` and the store's size bound: one
entry per KB path's segment folder, the merged view indexes, and clearing all of it."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

from core.store.arrays import INDEX_SUFFIX, folder_bytes
from core.store.private import KEY_FILE

STEMS_FILE = "stems.json"
# Per KB path, `<root>/sources/<path digest>.json`: the key its file had at a recorded stat
# (see `SegmentStore._known_key`); kept apart so a path's folder holds only its segment.
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


def view_files(root: Path) -> list[Path]:
    """Merged whole-view BM25 index folders (at most `MAX_VIEW_FILES`, outside the size bound)."""
    return sorted((root / "views").glob(f"*{INDEX_SUFFIX}")) if (root / "views").is_dir() else []


def clear_cache(root: Path) -> int:
    """Remove everything the store wrote under `root`; returns the number of bytes freed.
    Raises OSError (the first failure) when something could not be removed: a root that is a
    file, a read-only cache."""
    if root.exists() and not root.is_dir():
        raise NotADirectoryError(20, "not a folder", str(root))
    views = view_files(root)
    freed = sum(entry.bytes for entry in cache_entries(root)) + sum(map(folder_bytes, views))
    for name in ("segments", "views", SOURCES):
        if (root / name).exists():
            shutil.rmtree(root / name, onerror=_raise)
    for name in (STEMS_FILE, KEY_FILE):
        (root / name).unlink(missing_ok=True)
    return freed


def _raise(_function, _path, exc_info) -> None:
    raise exc_info[1]


def _source_of(meta: Path) -> str:
    try:
        return str(json.loads(meta.read_bytes()).get("file", "?"))
    except (OSError, ValueError):
        return "?"
