"""One end-to-end check against the real core.session.Session on sample_kb (no fakes)."""

from __future__ import annotations

import pytest
from conftest import make_app
from helpers import ask, settle
from textual.widgets import DataTable

from core.session import Session
from core.units import Caller
from mrptui.widgets.evidence import EvidenceTable


@pytest.fixture(scope="module")
def real_session() -> Session:
    return Session.open()


async def test_explorer_on_the_real_engine(real_session):
    app = make_app(real_session)
    app.caller = Caller()
    async with app.run_test(size=(160, 45)) as pilot:
        await ask(pilot, "What is Orion?")
        run = app.current
        assert run.done and not run.error and app.cursor == len(run.events)
        assert app.state.answer is not None and app.state.answer.status == "grounded"
        assert app.screen.query_one(EvidenceTable).row_count > 0
        await pilot.press("3", "enter")
        assert "not visible" not in str(app.screen.query_one("#detail-unit").content)
        await pilot.press("escape", "k")
        await settle(pilot)
        assert app.screen.query_one("#kb-units", DataTable).row_count == len(real_session.units(app.caller))
        await pilot.press("w")
        assert "question:" in app.screen.markup
