"""What the explorer tells a KB author to press, or that it found nothing, holds where the author is."""

from __future__ import annotations

from conftest import make_app
from fakes import RULES
from helpers import ask, record_notifications, settle
from textual.content import Content
from textual.widgets import Static

from mrptui.screens.main import MainScreen
from mrptui.widgets.query import QueryBox

SIZE = (160, 45)


async def reload_notes(pilot, app, session) -> list[str]:
    """What the reload notification says after its " · ": the way to re-run."""
    notes = record_notifications(app)
    session.touch()
    app.lifecycle.poll()
    await settle(pilot)
    return [n.rsplit(" · ", 1)[1] for n in notes if "KB files changed" in n or "KB reloaded" in n]


async def test_the_reload_notification_names_a_rerun_key_that_works_where_the_focus_is(session):
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, leave=False)
        assert isinstance(app.focused, QueryBox)
        assert await reload_notes(pilot, app, session) == ["press F5 to re-run"]
        await pilot.press("escape")  # a panel: single letters are commands
        assert isinstance(app.screen, MainScreen) and not isinstance(app.focused, QueryBox)
        assert await reload_notes(pilot, app, session) == ["press r to re-run"]
        await pilot.press("k")
        assert await reload_notes(pilot, app, session) == ["press / then F5 to re-run"]
        asked = len(session.requests)
        await pilot.press("slash", "f5")  # what it says works
        await settle(pilot)
        assert len(session.requests) == asked + 1 and isinstance(app.screen, MainScreen)


async def test_the_rules_screen_counts_one_rule_in_the_singular(session, monkeypatch):
    monkeypatch.setattr(session, "rules", lambda: [dict(RULES[0])])
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("escape", "R")
        title = Content.from_markup(str(app.screen.query_one("#rules-title", Static).content)).plain
        assert title.startswith("Rules · 1 rule · "), title
