"""Atomic folder publication: a segment folder is written under a temp name and renamed into
place, so readers see a whole segment or none. Single cache files are replaced atomically too
(`replace_file`), but without the fsync of `core.safe_io.atomic_write_bytes`, which user files get."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path



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
