"""Where the bundled config and sample KB live: env override, then the checkout, then the wheel."""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent.parent


def _locate(env_var: str, checkout_name: str, bundled_name: str) -> Path:
    override = os.environ.get(env_var)
    if override:
        return Path(override)
    checkout = _PACKAGE_DIR.parent / checkout_name
    if checkout.is_dir():
        return checkout
    return _PACKAGE_DIR / bundled_name


def config_dir() -> Path:
    """`MRPTUI_CONFIG`, else `config/` beside `core/`, else the copy inside the wheel."""
    return _locate("MRPTUI_CONFIG", "config", "bundled_config")


def sample_kb_dir() -> Path:
    """`MRPTUI_KB`, else `sample_kb/` beside `core/`, else the copy inside the wheel."""
    return _locate("MRPTUI_KB", "sample_kb", "bundled_kb")


def sample_queries_file() -> Path:
    """The labelled queries for the sample KB (`mrptui eval --sample`, the explorer's F4 default)."""
    return sample_kb_dir() / "queries.json"
