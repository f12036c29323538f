"""While events arrive the explorer renders at most every LIVE_RENDER_GAP_S; the run's end renders
at once, and a live render still queued then is dropped, since it would draw the same state again
(issue 41: ~60-100 ms of the UI thread a question)."""

from __future__ import annotations

from conftest import make_app
from fakes import FakeSession
from helpers import ask, settle, spy_calls

from mrptui.run_driver import LIVE_RENDER_GAP_S


async def test_the_runs_end_is_rendered_once_and_no_queued_render_follows_it() -> None:
    app = make_app(FakeSession(), batch_size=1)  # a message per event: live renders get queued
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        renders = spy_calls(
            app.runner, "refresh_view", note=lambda: bool(app.control.current and app.control.current.done)
        )
        await ask(pilot)
        await pilot.pause(LIVE_RENDER_GAP_S * 3)
        await settle(pilot)
        assert False in renders, renders  # it rendered live while the run lasted
        assert renders.count(True) == 1, renders
