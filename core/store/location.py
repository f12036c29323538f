"""Where the index store lives: `MRPTUI_CACHE_DIR`, else `$XDG_CACHE_HOME/mrptui`, else ~/.cache/mrptui.

`MRPTUI_NO_CACHE=1` (the CLI's `--no-cache`) turns the store off; `--cache-dir` sets `MRPTUI_CACHE_DIR`.
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_DIR_ENV = "MRPTUI_CACHE_DIR"
NO_CACHE_ENV = "MRPTUI_NO_CACHE"


def cache_root() -> Path | None:
    """The cache folder to use now, or None when caching is turned off."""
    if os.environ.get(NO_CACHE_ENV, "") not in ("", "0"):
        return None
    explicit = os.environ.get(CACHE_DIR_ENV)
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "mrptui"
