"""A KB past a whole-KB budget (`inputs.maxKbUnits`) is refused in the explorer as a config error
is: the status line and banner name the budget, questions do not run. A reload that grows the KB
past it refuses the KB too, rather than keep serving the last one (fail closed)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from conftest import make_app
from helpers import record_notifications, settle
from loading import HeldLoad, until
from textual.widgets import Static

from core.infra.resources import config_dir
from core.kernel.session import Session
from mrptui.session_seam import NullSession
from tests.support.engine_config import edited_config
from tests.support.store_kb import write_kb

SIZE = (150, 42)
BUDGET = "KB_TOO_LARGE the KB holds more than 50 units (inputs.maxKbUnits in retrieval.json)"


def status(app) -> str:
    return str(app.screen.query_one("#status", Static).render())


@pytest.fixture
def kb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MRPTUI_CACHE_DIR", str(tmp_path / "cache"))
    edited_config(tmp_path, config_dir(), {"inputs": {"maxKbUnits": 50}}, "retrieval.json")
    return tmp_path / "kb"


def opened(kb: Path):
    load = HeldLoad(partial(Session.open, [kb], kb.parent / "config"))
    return make_app(None, opener=load.opener)


async def test_a_kb_past_its_budget_is_not_loaded_and_the_budget_is_named(kb) -> None:
    files = write_kb(kb, files=3, per_file=20)
    app = opened(kb)
    notes = record_notifications(app)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.lifecycle.state.failed, "the load to fail")
        assert "KB not loaded" in status(app) and "inputs.maxKbUnits" in status(app)
        assert any(f"{files[2]}:1:1: {BUDGET}" in note for note in notes)
        assert isinstance(app.session, NullSession)


async def test_a_reload_past_the_budget_stops_serving_the_kb(kb) -> None:
    write_kb(kb, files=2, per_file=20)
    app = opened(kb)
    notes = record_notifications(app)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.lifecycle.state.phase == "ready", "the KB to open")
        await settle(pilot)
        write_kb(kb, files=3, per_file=20, seed=4)
        app.lifecycle.reload()
        await until(pilot, lambda: app.lifecycle.state.failed, "the reload to refuse the KB")
        await settle(pilot)
        assert isinstance(app.session, NullSession) and "inputs.maxKbUnits" in status(app)
        assert not app.lifecycle.state.reloading
        assert any(BUDGET in note for note in notes)
