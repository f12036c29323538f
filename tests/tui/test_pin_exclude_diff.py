"""Pilot tests: pinning and excluding units, the re-run, and the diff of two runs."""

from __future__ import annotations

from helpers import ask, record_notifications, select_timeline_row, settle

from mrptui.screens.diff import DiffScreen
from mrptui.screens.main import MainScreen

SIZE = (160, 45)


async def test_pin_and_exclude_rerun_and_the_diff(app, session):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        await select_timeline_row(pilot, lambda r: r.plugin == "kb-fast")
        await pilot.press("p")
        await settle(pilot)
        assert session.requests[-1].pins == {"kb": "kb-fast"}
        assert app.current.final.status == "no-context"
        await select_timeline_row(pilot, lambda r: r.plugin == "kb-fast")
        await pilot.press("x")
        await settle(pilot)
        assert session.requests[-1].excluded == frozenset({"kb-fast"}) and session.requests[-1].pins == {}
        assert [b.level for b in app.current.final.backtracks] == [1]  # only the sd fallthrough is left
        await pilot.press("d")
        assert isinstance(app.screen, DiffScreen)
        assert app.screen.changes > 0
        assert any(row.right == "excluded: kb-fast" and row.changed for row in app.screen.diff.rows)
        await pilot.press("c")
        assert "+ excluded: kb-fast" in app.clipboard
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_pin_needs_an_attempt_row(app, session):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        notes = record_notifications(app)
        await select_timeline_row(pilot, lambda r: r.kind == "plan")
        await pilot.press("p")
        assert any("select an attempt row" in n for n in notes)
        assert len(session.requests) == 1


async def test_diff_needs_two_runs(app):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        notes = record_notifications(app)
        await pilot.press("d")
        assert isinstance(app.screen, MainScreen)
        assert any("only one run" in n and "ask another question or re-run with r" in n for n in notes)
