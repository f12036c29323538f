"""Pilot tests: the rules screen, and going back from a screen."""

from __future__ import annotations

import pytest
from conftest import make_app
from fakes import FakeSession
from helpers import ask, plain_of, text_of
from shared_app import shared_app_of
from textual.widgets import Static

from core.infra.diagnostics import Code, Diagnostic, Severity

SIZE = (160, 45)
# Tests that open a screen or window on a fresh explorer, read it and close it share one (each
# leaves it as it started: tests/tui/shared_app.py).
shared_app = shared_app_of(SIZE)
on_the_shared_app = pytest.mark.asyncio(loop_scope="module")


async def test_rules_screen_shows_last_run_statistics(app):
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("escape", "R")
        screen = app.screen
        assert "no ThinkingDB retrieval" in text_of(screen.query_one("#rules-title", Static))
        await pilot.press("escape")
        await ask(pilot)
        await pilot.press("f3")
        screen = app.screen
        assert "2 fired, 2 never fired" in text_of(screen.query_one("#rules-title", Static))
        assert "RULE_UNKNOWN_RELATION" in text_of(screen.query_one("#rules-errors", Static))
        detail = text_of(screen.query_one("#rules-detail-text", Static))
        assert "fired 1×" in detail and "?x=airflow" in detail
        await pilot.press("down", "down")
        detail = text_of(screen.query_one("#rules-detail-text", Static))
        assert "never fired" in detail and "first unmatched premise: 2. ?y depends_on ?z" in detail
        await pilot.press("c")
        assert app.clipboard.startswith("dependency_transitive: ?x depends_on ?y, ?y depends_on ?z ⇒")
        await pilot.press("k")
        assert [type(s).__name__ for s in app.screen_stack] == ["MainScreen", "RulesScreen", "KBScreen"]


async def test_rules_screen_counts_a_kept_rule_as_a_warning_not_an_error():
    from fake_kb import DIAGNOSTICS

    kept = Diagnostic(
        code=Code.RULES_LAST_GOOD_KEPT,
        message="rule r7: invalid edit, last good version kept",
        file="config/thinkingdb.json",
        line=30,
        severity=Severity.WARNING,
    )
    app = make_app(FakeSession(diagnostics=[*DIAGNOSTICS, kept]))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("escape", "R")
        screen = app.screen
        assert plain_of(screen.query_one("#rules-counts", Static)) == "rule file: 1 error, 1 warning"
        lines = plain_of(screen.query_one("#rules-errors", Static)).splitlines()
        assert [line[0] for line in lines] == ["✗", "⚠"] and "last good version kept" in lines[1]


@on_the_shared_app
async def test_escape_goes_back_to_the_screen_a_screen_was_opened_from(shared):
    """KB → rules → Esc is the KB screen again; switching back and forth never grows the stack."""

    def stack() -> list[str]:
        return [type(s).__name__ for s in app.screen_stack]

    pilot, app = shared, shared.app
    await pilot.press("escape", "k", "R")
    assert stack() == ["MainScreen", "KBScreen", "RulesScreen"]
    await pilot.press("escape")
    assert stack() == ["MainScreen", "KBScreen"]
    await pilot.press("f3", "f2", "R", "k")  # back and forth: back to the KB screen below
    assert stack() == ["MainScreen", "KBScreen"]
    await pilot.press("escape")
    assert stack() == ["MainScreen"]
    await pilot.press("R", "k", "q")
    assert stack() == ["MainScreen", "RulesScreen"]
