"""Where the index store lives: `MRPTUI_CACHE_DIR`, else `$XDG_CACHE_HOME/mrptui`, else ~/.cache/mrptui.

`MRPTUI_NO_CACHE=1` turns the store off. The CLI's `--no-cache` and `--cache-dir` are passed to
`cache_root` and win over the environment; they are never written into it, so one process (a test
run, an embedding program) that runs several commands does not carry one command's flags into the next.
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_DIR_ENV = "MRPTUI_CACHE_DIR"
NO_CACHE_ENV = "MRPTUI_NO_CACHE"


def cache_root(cache_dir: str | Path | None = None, no_cache: bool = False) -> Path | None:
    """The cache folder to use now, or None when caching is turned off: the flags' when given."""
    if no_cache:
        return None
    if cache_dir:
        return Path(cache_dir).expanduser()
    if os.environ.get(NO_CACHE_ENV, "") not in ("", "0"):
        return None
    explicit = os.environ.get(CACHE_DIR_ENV)
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "mrptui"
