"""Atomic folder publication: a segment folder is written under a temp name and renamed into
place, so readers see a whole segment or none. Single files use `core.safe_io.atomic_write_bytes`."""

from __future__ import annotations

import os
import shutil
from pathlib import Path


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
