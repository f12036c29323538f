"""Zoom: `z` gives the focused panel the whole screen; `z` or Esc restores the layout. Snapshots of
the main screen with a backtracking run and of a zoomed panel at the three sizes users work at."""

from __future__ import annotations

import pytest
from conftest import make_app
from helpers import ask, settle

from mrptui.widgets.timeline import AttemptsTimeline

SIZES = [(80, 24), (150, 42), (200, 60)]


async def test_z_maximises_the_focused_panel_and_restores_the_layout(app) -> None:
    async with app.run_test(size=(150, 42)) as pilot:
        await ask(pilot)
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("3")  # the evidence panel
        await pilot.press("z")
        assert app.screen.maximized is app.screen.query_one("#evidence")
        assert app.screen.query_one("#evidence").size.width >= 148
        await pilot.press("z")
        assert app.screen.maximized is None
        await pilot.press("2", "z")
        assert app.screen.maximized is app.screen.query_one(AttemptsTimeline)
        await pilot.press("escape")
        assert app.screen.maximized is None


async def _after_run(pilot) -> None:
    await ask(pilot)
    await pilot.press("escape")
    await settle(pilot)
    pilot.app.clear_notifications()
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_main_screen_with_a_backtracking_run(snap_compare, size) -> None:
    assert snap_compare(make_app(), terminal_size=size, run_before=_after_run)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_zoomed_attempts_panel(snap_compare, size) -> None:
    async def run_before(pilot):
        await _after_run(pilot)
        await pilot.press("2", "z")
        await settle(pilot)

    assert snap_compare(make_app(), terminal_size=size, run_before=run_before)
