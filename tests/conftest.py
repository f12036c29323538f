"""Shared fixtures: the checkout's config and sample KB, and a clean terminal environment."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# NO_COLOR is read when an App is created, so removing it here keeps snapshots in colour.
os.environ.pop("NO_COLOR", None)


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture
def sample_kb() -> Path:
    return ROOT / "sample_kb"


@pytest.fixture
def config_path() -> Path:
    return ROOT / "config"
