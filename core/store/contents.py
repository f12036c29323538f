"""What the cache folder holds, for `mrptui cache info|clear` and the store's size bound: one
entry per KB path's segment folder, the merged view indexes, and clearing all of it.

A folder is used as a cache only while it holds nothing but what the store writes, or carries the
cache's `CACHEDIR.TAG` (the cross-tool marker, written at first use; backup tools skip such a
folder too). `--cache-dir ~/project` or the KB's own folder typed by mistake is refused with one
warning, never narrowed to 0700, filled, or emptied by `cache clear` (its `sources/` or `tmp/`
would have gone with the cache's).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
from pathlib import Path

from core.store.arrays import INDEX_SUFFIX, folder_bytes
from core.store.atomic import TEMP_FOLDER
from core.store.private import KEY_FILE, refusal, write_private

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


# https://bford.info/cachedir/: a file of this name starting with this line marks a cache folder.
TAG_FILE = "CACHEDIR.TAG"
_TAG = b"Signature: 8a477f597d28d172789f06886806bc55\n# This folder is mrptui's index cache (mrptui cache clear).\n"
# Every name the store writes at a cache's root, and the temporary files it replaces them through.
_OWN_NAMES = frozenset({KEY_FILE, STEMS_FILE, "segments", "views", SOURCES, TAGS, NLP, TEMP_FOLDER, "shards", TAG_FILE})
_OWN_TEMPS = tuple(f".{name}." for name in sorted(_OWN_NAMES))


def foreign_entry(root: Path) -> str | None:
    """A name at `root` that the store never writes, when `root` carries no cache tag (None: it
    is a cache, an older one without the tag, empty or missing)."""
    try:
        if (root / TAG_FILE).read_bytes().startswith(_TAG[:43]):
            return None
    except OSError:
        pass
    try:
        names = os.listdir(root)
    except OSError:
        return None  # missing (made at first use) or unusable: `refusal` says which
    # A file being replaced sits beside it as `.<name>.<random>.tmp` (`replace_file`): the key, stems.json.
    others = sorted(n for n in names if n not in _OWN_NAMES and not n.startswith(_OWN_TEMPS))
    return others[0] if others else None


def cache_refusal(root: Path) -> str | None:
    """Why `root` may not hold the cache: `refusal`'s reasons, or a folder holding what mrptui did
    not write. A usable root is tagged (a root that cannot be written stays as it is)."""
    foreign = foreign_entry(root)  # before `refusal`, which would narrow the folder's mode
    if foreign is not None:
        return (
            f"refusing the index cache at {root}: it holds {foreign!r}, which mrptui did not write, "
            f"and no {TAG_FILE}; running without it (name an empty or new folder)"
        )
    reason = refusal(root)
    if reason is None and not (root / TAG_FILE).exists():
        try:
            write_private(root / TAG_FILE, [_TAG])
        except OSError:
            pass
    return reason


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
    if (foreign := foreign_entry(root)) is not None:
        raise PermissionError(errno.EPERM, f"it holds {foreign!r}, which mrptui did not write, and no {TAG_FILE}")
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
    (root / TAG_FILE).unlink(missing_ok=True)  # what stayed has the store's names: still adopted
    return ClearResult(max(0, before - _stored_bytes(root)), failures)


def _stored_bytes(root: Path) -> int:
    extra = sum(folder_bytes(root / name) for name in (TAGS, NLP) if (root / name).is_dir())
    return sum(entry.bytes for entry in cache_entries(root)) + sum(map(folder_bytes, view_files(root))) + extra


def _source_of(meta: Path) -> str:
    try:
        return str(json.loads(meta.read_bytes()).get("file", "?"))
    except (OSError, ValueError):
        return "?"
