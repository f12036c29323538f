"""The status line says, until fixed, that the KB or the rules run on withdrawn units or last good rules."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import make_app
from helpers import settle
from textual.widgets import Static

from core.infra.resources import config_dir
from core.kernel.session import Session
from core.units import Caller

GOOD = """## Context Unit pumps::chunk-000::unit-000
Role: Definition
Topic: Ram pump
Claim: A ram pump lifts water with the energy of a falling flow.
"""
BROKEN = GOOD.replace("Role: Definition", "Role: Definitoin")
VALVE = """
## Context Unit pumps::chunk-000::unit-001
Role: Description
Topic: Waste valve
Subject: Ram pump
Relation: uses
Object: waste valve
Claim: The ram pump uses a waste valve that slams shut as the flow speeds up.
"""


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
        rules.write_text(
            rules.read_text(encoding="utf-8").replace('"weight": 0.95', '"weight": 5', 1), encoding="utf-8"
        )
        app.lifecycle.reload()
        await settle(pilot)
        status = _status(app)
        assert "KB: 1 unit withdrawn" in status
        assert "rules: 1 invalid edit, last good version kept" in status and "(F8)" in status
        (kb / "pumps.md").write_text(GOOD, encoding="utf-8")
        rules.write_text(
            rules.read_text(encoding="utf-8").replace('"weight": 5', '"weight": 0.95', 1), encoding="utf-8"
        )
        app.lifecycle.reload()
        await settle(pilot)
        assert "withdrawn" not in _status(app) and "last good" not in _status(app)


async def test_one_bad_relation_withdraws_one_unit_and_the_warning_points_at_its_line(tmp_path: Path) -> None:
    kb, config = _workspace(tmp_path)
    (kb / "pumps.md").write_text(GOOD + VALVE, encoding="utf-8")
    session = Session.open([kb], config)
    app = make_app(session)
    app.caller = Caller()
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        (kb / "pumps.md").write_text(GOOD + VALVE.replace("Relation: uses", "Relation: usez"), encoding="utf-8")
        app.lifecycle.reload()
        await settle(pilot)
        assert "KB: 1 unit withdrawn" in _status(app)
        withdrawn = [d for d in session.diagnostics() if d.code.value == "UNITS_WITHDRAWN"]
        assert len(withdrawn) == 1 and withdrawn[0].units == 1
        assert withdrawn[0].line == (GOOD + VALVE).splitlines().index("## Context Unit pumps::chunk-000::unit-001") + 1
