"""State you can see and undo: ctrl+z takes back the last pin, exclusion, dropped unit or breakpoint
(a ✎ you row says so), and the F-keys open their screens from every screen."""

from __future__ import annotations

from helpers import ask, record_notifications, select_timeline_row, settle

from mrptui.breakpoints import Breakpoint
from mrptui.widgets.timeline import AttemptsTimeline

SIZE = (150, 42)


def undo_rows(app) -> list[str]:
    return [
        row.reason for row in app.screen.query_one(AttemptsTimeline).entries if getattr(row, "status", "") == "undo"
    ]


async def test_ctrl_z_undoes_an_exclusion_with_a_rerun_and_a_you_row(app, session) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        await select_timeline_row(pilot, lambda r: r.kind == "attempt" and r.plugin == "kb-fast")
        await pilot.press("x")
        await settle(pilot)
        assert app.current.request.excluded == frozenset({"kb-fast"}) and len(app.runs) == 2
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert len(app.runs) == 3 and app.current.request.excluded == frozenset()
        assert session.requests[-1].excluded == frozenset()
        assert undo_rows(app) == ["undid kb-fast excluded"]
        notes = record_notifications(app)
        await pilot.press("ctrl+z")
        assert len(app.runs) == 3 and notes and "nothing to undo" in notes[-1]


async def test_ctrl_z_undoes_a_dropped_unit(app) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        await pilot.press("3", "u")
        await settle(pilot)
        dropped = app.current.request.excluded_units
        assert len(dropped) == 1
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert app.current.request.excluded_units == frozenset()
        assert undo_rows(app) == [f"undid unit {next(iter(dropped))} excluded from the evidence"]


async def test_ctrl_z_undoes_a_breakpoint_and_the_timeline_says_so(app) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        await select_timeline_row(pilot, lambda r: r.kind == "attempt" and r.plugin == "kb-fast")
        await pilot.press("t")
        assert Breakpoint("plugin", "kb-fast") in app.breakpoints
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert Breakpoint("plugin", "kb-fast") not in app.breakpoints and len(app.runs) == 1
        assert undo_rows(app) == ["undid breakpoint set: plugin kb-fast"]


async def test_in_the_question_box_ctrl_z_undoes_typing_not_the_last_change(app) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        await select_timeline_row(pilot, lambda r: r.kind == "attempt" and r.plugin == "kb-fast")
        await pilot.press("t", "slash", "x", "ctrl+z")
        assert Breakpoint("plugin", "kb-fast") in app.breakpoints


async def test_f_keys_open_their_screens_from_every_screen(app) -> None:
    from mrptui.screens.eval import EvalScreen
    from mrptui.screens.kb import KBScreen
    from mrptui.screens.rules import RulesScreen

    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        await pilot.press("f2")
        assert isinstance(app.screen, KBScreen)
        await pilot.press("f4")
        await settle(pilot)
        assert isinstance(app.screen, EvalScreen)
        await pilot.press("f3")
        assert isinstance(app.screen, RulesScreen)
        await pilot.press("f2")
        assert isinstance(app.screen, KBScreen)
