"""Atomic folder publication: a segment folder is written under a temp name and renamed into
place, so readers see a whole segment or none. Single cache files are replaced atomically too
(`replace_file`), but without the fsync of `core.infra.safe_io.atomic_write_bytes`, which user files get."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from functools import cache
from pathlib import Path

# `<root>/tmp/`: folders are written here before `publish_dir` renames them into place, each
# named for its writer, so the next open finds in one listing what a killed writer left.
TEMP_FOLDER = "tmp"
# `.tmp-<name>-<pid>.<start time>-<random>`; the start time tells a reused pid from the writer.
_OWNED = re.compile(r"^\.tmp-.*-(\d+)\.(\d+)-[^-]*$")
# A folder whose writer cannot be told (an older version's name, no /proc) is stale after this.
STALE_TEMP_SECONDS = 3600


def temp_dir(parent: Path, name: str) -> Path:
    """A new private folder under `parent` to write in before `publish_dir`, named for this
    process, so that `remove_orphans` can tell whether its writer still runs."""
    pid = os.getpid()
    return Path(tempfile.mkdtemp(prefix=f".tmp-{name}-{pid}.{_start_time(pid) or 0}-", dir=parent))


def remove_orphans(folder: Path) -> int:
    """Remove the temp folders under `folder` whose writer no longer runs (killed mid-write);
    returns how many went. A folder whose writer cannot be told goes once it is stale."""
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    removed = 0
    for name in names:
        if name.startswith(".tmp-") and is_orphan(folder / name):
            shutil.rmtree(folder / name, ignore_errors=True)
            removed += 1
    return removed


def is_orphan(temp: Path) -> bool:
    """Whether the temp folder's writer no longer runs (or, when that cannot be told, it is stale)."""
    return not _owner_runs(temp)


def _owner_runs(temp: Path) -> bool:
    owned = _OWNED.match(temp.name)
    if owned is not None and owned[2] != "0":
        pid, started = int(owned[1]), int(owned[2])
        return _start_time(pid) == started
    try:
        return time.time() - temp.stat().st_mtime < STALE_TEMP_SECONDS
    except OSError:
        return True  # gone meanwhile, or not ours to judge


def _start_time(pid: int) -> int | None:
    """When process `pid` started (clock ticks after boot, /proc), None when it does not run."""
    return _own_start_time(pid) if pid == os.getpid() else _read_start_time(pid)


@cache
def _own_start_time(pid: int) -> int | None:
    # Keyed by pid: a forked worker inherits this cache and must not answer with its parent's.
    return _read_start_time(pid)


def _read_start_time(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            # The command name may hold spaces and parentheses: fields count from its last ")".
            return int(handle.read().rsplit(b")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def publish_dir(temp: Path, final: Path) -> bool:
    """Rename a fully written folder into place; False (and `temp` removed) if another won the race.

    `os.rename` of a folder onto a missing name is atomic, so a reader never sees a half-filled one.
    """
    try:
        os.rename(temp, final)
        return True
    except OSError:
        shutil.rmtree(temp, ignore_errors=True)
        if not final.is_dir():
            raise
        return False


def replace_file(path: Path, data: bytes) -> None:
    """Replace the cache file `path` with `data` atomically (temp file, rename), readable only by
    its owner (mkstemp makes it 0600). No fsync: every cache file is checked on read (digests,
    keys) or only a shortcut, so one lost in a crash costs a rebuild, while a cold open's workers
    waited on several fsyncs per KB file."""
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
