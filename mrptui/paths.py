"""Where the explorer keeps the user's own files (question history, exports): the XDG data folder."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def user_data_dir() -> Path:
    """`$XDG_DATA_HOME/mrptui`, else `~/.local/share/mrptui`."""
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "mrptui"


def read_only(path: Path) -> str:
    """ "is read-only (mode 0400)" when the user made `path` read-only, else "". Asked of the mode
    bits, so root respects it too: a save replaces the file by rename, which its mode never stops
    (as conversation memory does: core/memory/journal.py)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return ""
    return "" if mode & stat.S_IWUSR else f"is read-only (mode {stat.S_IMODE(mode):04o})"
