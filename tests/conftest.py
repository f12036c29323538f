"""Shared fixtures: the checkout's config and sample KB, and a clean terminal environment."""

from __future__ import annotations

import os
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


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture
def sample_kb() -> Path:
    return ROOT / "sample_kb"


@pytest.fixture
def config_path() -> Path:
    return ROOT / "config"
