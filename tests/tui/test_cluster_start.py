"""`mrptui --cluster local:2 --shards 2`: the explorer starts its own local cluster in the load
worker (the first frame does not wait for it), shows it in the status line and the evidence, and
stops its worker processes when it quits; a cluster it cannot reach is a load error naming it,
in the app, never a traceback. The one cluster start of this module is the first test's."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from helpers import ask, settle, until

from mrptui.cli import build_parser
from mrptui.commands import explore
from mrptui.widgets.evidence import EvidenceTable

pytest.importorskip("distributed")

SAMPLE = str(Path(__file__).resolve().parents[2] / "sample_kb")


def explorer(*flags: str):
    """The app `mrptui --kb sample_kb --no-cache FLAGS` runs, with the process helpers its `run`
    starts before Textual takes stderr (a local cluster's worker processes need them)."""
    app = explore.build_app(build_parser().parse_args(["--kb", SAMPLE, "--no-cache", *flags]))
    explore.start_pool_helpers()
    return app


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture(autouse=True)
def _quiet(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("MRPTUI_MEMORY_DIR", str(tmp_path / "memory"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))


async def test_the_explorer_starts_a_local_cluster_shows_it_and_stops_it_on_quit() -> None:
    app = explorer("--cluster", "local:2", "--shards", "2")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: "cluster local:2 · starting…" in str(app.screen.query_one("#status").content))
        await until(pilot, lambda: app.kb_state.phase == "ready", 180)
        await settle(pilot)
        assert "cluster local:2 · 2 shards" in str(app.screen.query_one("#status").content)
        workers = list(app.lifecycle.cluster._cluster.worker_pids().values())
        assert len(workers) == 2 and all(alive(pid) for pid in workers)
        await ask(pilot, "what uses python")
        table = app.screen.query_one(EvidenceTable)
        assert "shard" in [c.key for c in table.columns_shown] and table.row_count
        assert {c.shard for c in table.current.candidates} <= {1, 2}
    await until_gone(workers)


async def until_gone(pids: list[int], seconds: float = 30.0) -> None:
    import asyncio
    import time

    deadline = time.monotonic() + seconds
    while any(alive(pid) for pid in pids):
        assert time.monotonic() < deadline, f"the local cluster's workers outlived the app: {pids}"
        await asyncio.sleep(0.1)


async def test_a_cluster_that_cannot_be_reached_is_a_load_error_in_the_app(tmp_path, config_path) -> None:
    config = tmp_path / "config"
    shutil.copytree(config_path, config)
    (config / "cluster.json").write_text(json.dumps({"connectTimeoutS": 1}), encoding="utf-8")
    app = explorer("--config", str(config), "--cluster", "tcp://127.0.0.1:9")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.kb_state.failed, 60)
        await pilot.pause()
        assert app.kb_state.error.startswith("--cluster tcp://127.0.0.1:9")
        status = str(app.screen.query_one("#status").content)
        assert "KB not loaded" in status and "--cluster tcp://127.0.0.1:9" in status


def test_a_bad_cluster_flag_is_refused_before_the_app_starts() -> None:
    from mrptui.commands import UsageError

    with pytest.raises(UsageError, match="local:0: between 1 and"):
        explorer("--cluster", "local:0")
    with pytest.raises(UsageError, match="--shards and --shard-dir need --cluster"):
        explorer("--shards", "3")
