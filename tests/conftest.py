"""Shared fixtures: the checkout's config and sample KB, and a clean terminal environment."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# The long property-test run (`make fuzz`): `--hypothesis-profile=fuzz` or HYPOTHESIS_PROFILE=fuzz.
# Tests keep their own bounded settings otherwise, so `make test` stays fast.
settings.register_profile(
    "fuzz", max_examples=500, deadline=None, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
if os.environ.get("HYPOTHESIS_PROFILE"):
    settings.load_profile(os.environ["HYPOTHESIS_PROFILE"])

ROOT = Path(__file__).resolve().parent.parent

# NO_COLOR is read when an App is created, so removing it here keeps snapshots in colour.
os.environ.pop("NO_COLOR", None)

# Tests never touch the user's index cache: set at import, before any KB loads, and inherited by
# the subprocesses CLI tests start.
_CACHE_DIR = tempfile.mkdtemp(prefix="mrptui-test-cache-")
os.environ["MRPTUI_CACHE_DIR"] = _CACHE_DIR
os.environ.pop("MRPTUI_NO_CACHE", None)


@pytest.fixture(scope="session", autouse=True)
def _test_cache_dir():
    yield Path(_CACHE_DIR)
    shutil.rmtree(_CACHE_DIR, ignore_errors=True)


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture
def sample_kb() -> Path:
    return ROOT / "sample_kb"


@pytest.fixture
def config_path() -> Path:
    return ROOT / "config"
