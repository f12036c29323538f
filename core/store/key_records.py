"""Where a KB path's segments live in the cache, and the key its file had at a recorded stat, so
an unchanged file is not read and hashed again (git's index does the same).

Layout: `<root>/segments/<path digest>/<key>/` for the segments, `<root>/sources/<path digest>.json`
for the record (core/store/contents.py: `SOURCES`).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from core.store.atomic import replace_file
from core.store.contents import SOURCES
from core.store.groups import Source
from core.store.private import private_dirs
from core.store.shaping import RACY_NS, code_digest
from core.store.source_files import SourceStat, newest_mtime, stat_of


def segments_folder(root: Path, file: Source) -> Path:
    """The folder holding the segments of one KB path (one per key; only the newest is kept)."""
    return root / "segments" / _path_digest(file)


def known_key(root: Path, file: Source, stat: SourceStat | None = None) -> str | None:
    """The key recorded for the file's current stat (`stat` when the caller just took it).
    Trusted only when the file was last modified at least `RACY_NS` before it was read: an edit
    within the same timestamp tick as the read could otherwise keep size and mtime. Inode and
    ctime catch replaced or touched files, also a replace that keeps size and mtime (rsync): the
    stat recorded is the one taken before reading (`remember_key`)."""
    try:
        record = json.loads(_record_path(root, file).read_bytes())
        stat = stat_of(file) if stat is None else stat
        if (
            record["code"] == code_digest(root)
            and record["stat"] == stat
            and record["read_ns"] - newest_mtime(stat) >= RACY_NS
            and (segments_folder(root, file) / record["key"]).is_dir()
        ):
            return str(record["key"])
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        pass
    return None


def remember_key(root: Path, file: Source, key: str, before: SourceStat | None, read_ns: int) -> None:
    """Record `key` for the stat the file had before it was read, if it still has it now that
    the segment is published: a file replaced meanwhile (even one keeping size and mtime) is
    read and hashed again by the next open instead of served from the old key."""
    try:
        if before is None or stat_of(file) != before:
            return
        record = {"code": code_digest(root), "key": key, "stat": before, "read_ns": read_ns}
        path = _record_path(root, file)
        private_dirs(path.parent, root)
        replace_file(path, json.dumps(record).encode())
    except OSError:
        pass  # only a shortcut: the next open reads and hashes the file


def _record_path(root: Path, file: Source) -> Path:
    return root / SOURCES / f"{_path_digest(file)}.json"


def _path_digest(file: Source) -> str:
    return hashlib.sha256(os.fsencode(str(Path(str(file)).absolute()))).hexdigest()[:24]
