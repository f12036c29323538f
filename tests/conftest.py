"""Shared fixtures: the checkout's config and sample KB, and a clean terminal environment."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from syrupy.data import SnapshotUnknown

ROOT = Path(__file__).resolve().parent.parent
# The scripted OpenAI-compatible server the LLM tests talk to, in every test folder.
pytest_plugins = ["tests.support.llm_server"]

# Hypothesis profiles: `default` for `make test` (fixed seed, no example database, so every run
# sees the same examples) and `fuzz` for `make fuzz` (HYPOTHESIS_PROFILE=fuzz or
# `--hypothesis-profile=fuzz`: fresh examples, 500 for tests that take the profile's count).
# Suites with their own counts (tests/support/fuzz_settings.py, the hardening suites) multiply them
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
# the subprocesses CLI tests start. Every pytest process has its own (each xdist worker imports
# this file), so workers never share a cache folder.
_CACHE_DIR = tempfile.mkdtemp(prefix="mrptui-test-cache-")
os.environ["MRPTUI_CACHE_DIR"] = _CACHE_DIR
os.environ.pop("MRPTUI_NO_CACHE", None)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Removed in every process that made one, the xdist controller included (it runs no fixtures)."""
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


@pytest.fixture(autouse=True)
def _test_cache_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test gets the suite's cache variables back, so a test that sets them (monkeypatch does
    undo its own) or a future command that did never points the tests after it elsewhere."""
    monkeypatch.setenv("MRPTUI_CACHE_DIR", _CACHE_DIR)
    monkeypatch.delenv("MRPTUI_NO_CACHE", raising=False)
    # A session opened by an earlier test chose where NLP data unpacks (core/nlp/unpacked.py).
    from core.nlp import unpacked

    monkeypatch.setattr(unpacked, "_session_root", ())


@pytest.fixture(autouse=True)
def _private_history(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own question history, so no test reads or writes the user's real one."""
    path = tmp_path_factory.mktemp("history") / "history"
    monkeypatch.setenv("MRPTUI_HISTORY", str(path))
    monkeypatch.setenv("XDG_DATA_HOME", str(path.parent / "xdg"))
    return path


# -- unused snapshots under pytest-xdist -----------------------------------------------------------
# syrupy fails a run that leaves a snapshot file unused (a stale or untracked SVG), but it skips
# that check in every process of an xdist run (`make test`). Each worker hands the controller what
# its report used and left unused; the controller fails on, or with --snapshot-update deletes, what
# no worker used. `make test` distributes by file, so one worker judges all of a file's snapshots,
# as a serial run does.


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        report = session.config._syrupy.report  # type: ignore[attr-defined]
        workeroutput["snapshots"] = {
            "used": [[c.location, s.name] for c in report.used for s in c],
            "unused": [[c.location, s.name] for c in report.unused for s in c],
            "counts": [report.num_matched, report.num_failed, report.num_created, report.num_updated],
        }
        return
    merged = getattr(session.config, "_merged_snapshots", None)
    if merged is None:
        return
    # syrupy may also report a file as a whole (SnapshotUnknown): that counts only when no worker
    # used a snapshot in it and no named snapshot of it is already listed.
    named = merged["unused"] - merged["used"]
    whole = {location for location, name in named if name == SnapshotUnknown().name}
    named -= {(location, SnapshotUnknown().name) for location in whole}
    seen = {location for location, _ in merged["used"] | named}
    unused = sorted(named | {(location, SnapshotUnknown().name) for location in whole - seen})
    merged["unused_final"] = unused
    if not unused:
        return
    if session.config.option.update_snapshots:
        # One snapshot per .svg file (pytest-textual-snapshot): deleting the snapshot is deleting the file.
        for location in {location for location, _ in unused if location.endswith(".svg")}:
            Path(location).unlink(missing_ok=True)
    else:
        session.exitstatus |= pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    """xdist's controller: a worker finished; keep its snapshot bookkeeping."""
    report = getattr(node, "workeroutput", {}).get("snapshots")
    if report is None:
        return
    merged = node.config.__dict__.setdefault(
        "_merged_snapshots", {"used": set(), "unused": set(), "counts": [0, 0, 0, 0]}
    )
    merged["used"] |= {tuple(pair) for pair in report["used"]}
    merged["unused"] |= {tuple(pair) for pair in report["unused"]}
    merged["counts"] = [a + b for a, b in zip(merged["counts"], report["counts"])]


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    merged = getattr(config, "_merged_snapshots", None)
    if merged is None:
        return
    matched, failed, created, updated = merged["counts"]
    unused = merged.get("unused_final", [])
    if not (matched or failed or created or updated or unused):
        return
    terminalreporter.write_sep("-", "snapshot report summary (all xdist workers)")
    terminalreporter.write_line(f"{matched} snapshots passed. {failed} failed. {created} generated. {updated} updated.")
    if unused:
        verb = "deleted" if config.option.update_snapshots else "unused"
        terminalreporter.write_line(f"{len(unused)} snapshot(s) {verb}:", red=not config.option.update_snapshots)
        for location, name in unused:
            terminalreporter.write_line(f"  {name} ({location})")
        if not config.option.update_snapshots:
            terminalreporter.write_line("Re-run with --snapshot-update to delete unused snapshots.")
