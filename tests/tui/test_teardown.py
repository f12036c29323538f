"""Trace events that arrive after the main screen's panels are gone (the app quitting, or a screen
switch mid-run) are dropped, never a crash."""

from __future__ import annotations

import asyncio
import time

from conftest import make_app
from fake_runs import thinkingdb_run
from fakes import FakeSession
from helpers import until

from mrptui.messages import EventsArrived


class EndlessSession(FakeSession):
    """A run that keeps the worker busy: the same canned events, again and again, a little apart."""

    def run(self, request, steering=None):
        self.requests.append(request)
        events = thinkingdb_run(request)
        yield from events[:2]
        for _ in range(2000):
            for event in events[2:-1]:
                time.sleep(0.0005)
                yield event


async def _taken_in(pilot) -> None:
    """Return once the app has handled every message queued before this call (a callback queued
    behind them runs last) or has failed on one, instead of sleeping for a guess at how long that takes."""
    handled = asyncio.Event()
    pilot.app.call_later(handled.set)
    await until(pilot, lambda: handled.is_set() or pilot.app._exception is not None)


async def test_events_that_arrive_while_the_app_shuts_down_mid_run_are_dropped() -> None:
    """The app closes while the engine still posts events: the screens' panels go first, and the
    events queued behind them must find nothing to draw, not a missing PlanPanel."""
    app = make_app(EndlessSession())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press(*"why", "enter")
        await until(pilot, lambda: app.control.is_live)
    assert app._exception is None, app._exception


async def test_events_routed_after_the_main_panels_are_removed_are_dropped() -> None:
    app = make_app(EndlessSession())
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press(*"why", "enter")
        await until(pilot, lambda: app.control.is_live)
        run = app.current
        await app.main.query_one("#panels").remove()  # as teardown removes them, before the screen itself
        app.post_message(EventsArrived(run.run_id, list(thinkingdb_run(run.request))[:3]))
        await _taken_in(pilot)
        app.control.cancel()  # the endless fake session goes on posting events past the cancel
        await _taken_in(pilot)
    assert app._exception is None, app._exception
