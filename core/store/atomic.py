"""Atomic file and directory writes: readers see the old content or the new, never a part.

Minimal on purpose; it is the temp + `os.replace` pattern the index store needs.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temp file in the same folder and one rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def publish_dir(temp: Path, final: Path) -> bool:
    """Rename a fully written folder into place; False (and `temp` removed) if another won the race.

    `os.rename` of a folder onto a missing name is atomic, so a reader never sees a half-filled one.
    """
    try:
        os.rename(temp, final)
        return True
    except OSError:
        if not final.is_dir():
            raise
        shutil.rmtree(temp, ignore_errors=True)
        return False
