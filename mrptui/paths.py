"""Where the explorer keeps the user's own files (question history, exports): the XDG data folder."""

from __future__ import annotations

import os
from pathlib import Path


def user_data_dir() -> Path:
    """`$XDG_DATA_HOME/mrptui`, else `~/.local/share/mrptui`."""
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "mrptui"
