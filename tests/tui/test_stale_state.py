"""The status line says, until fixed, that the KB or the rules run on withdrawn units or last good rules."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import make_app
from helpers import settle
from textual.widgets import Static

from core.resources import config_dir
from core.session import Session
from core.units import Caller

GOOD = """## Context Unit pumps::chunk-000::unit-000
Role: Definition
Topic: Ram pump
Claim: A ram pump lifts water with the energy of a falling flow.
"""
BROKEN = GOOD.replace("Role: Definition", "Role: Definitoin")


def _workspace(tmp_path: Path) -> tuple[Path, Path]:
    kb, config = tmp_path / "kb", tmp_path / "config"
    kb.mkdir()
    (kb / "pumps.md").write_text(GOOD, encoding="utf-8")
    shutil.copytree(config_dir(), config)
    return kb, config


def _status(app) -> str:
    return str(app.screen.query_one("#status", Static).render())


async def test_withdrawn_units_and_last_good_rules_stay_on_the_status_line_until_fixed(tmp_path: Path) -> None:
    kb, config = _workspace(tmp_path)
    session = Session.open([kb], config)
    app = make_app(session)
    app.caller = Caller()
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        assert "withdrawn" not in _status(app) and "last good" not in _status(app)
        (kb / "pumps.md").write_text(BROKEN, encoding="utf-8")
        rules = config / "thinkingdb.json"
        rules.write_text(rules.read_text(encoding="utf-8").replace('"weight": 0.95', '"weight": 5', 1), encoding="utf-8")
        app.reload_kb()
        await settle(pilot)
        status = _status(app)
        assert "KB: 1 file's units withdrawn" in status
        assert "rules: 1 invalid edit, last good version kept" in status and "(F8)" in status
        (kb / "pumps.md").write_text(GOOD, encoding="utf-8")
        rules.write_text(rules.read_text(encoding="utf-8").replace('"weight": 5', '"weight": 0.95', 1), encoding="utf-8")
        app.reload_kb()
        await settle(pilot)
        assert "withdrawn" not in _status(app) and "last good" not in _status(app)
