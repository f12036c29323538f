"""Where the bundled config and sample KB live: env override, then the checkout, then the wheel."""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent.parent


def _locate(env_var: str | None, checkout_name: str, bundled_name: str) -> Path:
    override = os.environ.get(env_var) if env_var else None
    if override:
        return Path(override)
    checkout = _PACKAGE_DIR.parent / checkout_name
    if checkout.is_dir():
        return checkout
    return _PACKAGE_DIR / bundled_name


def config_dir() -> Path:
    """`MRPTUI_CONFIG`, else `config/` beside `core/`, else the copy inside the wheel."""
    return _locate("MRPTUI_CONFIG", "config", "bundled_config")


# Files the engine cannot run without; llm.json, keymap.json and the embeddings settings default
# to their models when missing.
BUNDLED_DEFAULTS = ("engine.json", "retrieval.json", "thinkingdb.json")


def config_file(directory: Path | None, name: str) -> Path:
    """`name` in a config folder, else the bundled one (checkout or wheel, never $MRPTUI_CONFIG's):
    a folder holds only the files its author changes, so a KB's own rules need no copy of the
    engine's settings (docs/decisions.md)."""
    own = (directory or config_dir()) / name
    if os.path.lexists(own) or name not in BUNDLED_DEFAULTS:
        return own
    return _locate(None, "config", "bundled_config") / name


def sample_kb_dir() -> Path:
    """`MRPTUI_KB`, else `sample_kb/` beside `core/`, else the copy inside the wheel."""
    return _locate("MRPTUI_KB", "sample_kb", "bundled_kb")


def sample_queries_file() -> Path:
    """The labelled queries for the sample KB (`mrptui eval --sample`, the explorer's F4 default)."""
    return sample_kb_dir() / "queries.json"
