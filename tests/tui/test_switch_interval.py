"""The thread switch interval is short exactly while an engine worker pulls a run (issue 41, keypress)."""

from __future__ import annotations

import sys
import threading

import pytest
from helpers import ask, settle

from mrptui.breakpoints import Breakpoint
from mrptui.switch_interval import LIVE_SWITCH_S, while_pulling

SIZE = (160, 45)


@pytest.fixture
def default_interval():
    saved = sys.getswitchinterval()
    sys.setswitchinterval(0.005)
    yield 0.005
    sys.setswitchinterval(saved)


def test_overlapping_pulls_keep_it_short_until_the_last_one_stops(default_interval):
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, float] = {}

    def first() -> None:
        with while_pulling():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    worker = threading.Thread(target=first)
    worker.start()
    first_in.wait(5)
    with while_pulling():
        second_in.set()
        first_out.wait(5)
        seen["after the first stopped"] = sys.getswitchinterval()
    worker.join(5)
    assert seen == {"after the first stopped": LIVE_SWITCH_S}
    assert sys.getswitchinterval() == default_interval


def test_a_shorter_interval_set_before_is_kept_and_restored(default_interval):
    sys.setswitchinterval(LIVE_SWITCH_S / 2)
    with while_pulling():
        assert sys.getswitchinterval() == LIVE_SWITCH_S / 2
    assert sys.getswitchinterval() == LIVE_SWITCH_S / 2


def test_an_engine_error_still_restores_it(default_interval):
    with pytest.raises(RuntimeError), while_pulling():
        raise RuntimeError("the engine failed")
    assert sys.getswitchinterval() == default_interval


async def test_a_held_run_keeps_it_short_and_its_end_restores_it(app, default_interval):
    async with app.run_test(size=SIZE) as pilot:
        app.control.breakpoints.add(Breakpoint("plugin", "kb-thinkingdb"))
        await ask(pilot)
        assert app.control.held and not app.current.done
        assert sys.getswitchinterval() == LIVE_SWITCH_S
        await pilot.press("g")
        await settle(pilot)
        assert app.current.done
        assert sys.getswitchinterval() == default_interval


async def test_events_arriving_right_after_a_render_are_applied_in_order_and_drawn_soon_after(app):
    from helpers import until
    from textual.widgets import Static

    from mrptui.messages import EventsArrived

    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        recorded = list(app.current.events)
        app.control.breakpoints.add(Breakpoint("plugin", "kb-thinkingdb"))
        await pilot.press("r")
        await settle(pilot)
        run = app.current
        held_at = len(run.events)
        app.runner.refresh_view()  # a render just now: the next ones wait for the gap
        app.runner.arrived(EventsArrived(run.run_id, tuple(recorded[:3])))
        app.runner.arrived(EventsArrived(run.run_id, tuple(recorded[3:5])))
        assert run.events[held_at:] == recorded[:5] and app.cursor == held_at + 5  # applied at once, in order
        status = app.screen.query_one("#status", Static)
        total = f"event {held_at + 5} of {held_at + 5}"
        await until(pilot, lambda: total in str(status.render()), seconds=5)
        app.control.cancel()
        await settle(pilot)
