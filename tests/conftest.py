"""Shared fixtures: the checkout's config and sample KB, and a clean terminal environment."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent

# Hypothesis profiles: `default` for `make test` (fixed seed, no example database, so every run
# sees the same examples) and `fuzz` for `make fuzz` (HYPOTHESIS_PROFILE=fuzz or
# `--hypothesis-profile=fuzz`: fresh examples, 500 for tests that take the profile's count).
# Suites with their own counts (tests/core/fuzz_settings.py, the hardening suites) multiply them
# by FUZZ_SCALE through HARDENING_EXAMPLES under the fuzz profile.
FUZZ_SCALE = 10
_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]
settings.register_profile("default", deadline=None, derandomize=True, database=None, suppress_health_check=_QUIET)
settings.register_profile("fuzz", max_examples=500, deadline=None, database=None, suppress_health_check=_QUIET)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
if os.environ.get("HYPOTHESIS_PROFILE") == "fuzz":
    os.environ.setdefault("HARDENING_EXAMPLES", str(FUZZ_SCALE))

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
