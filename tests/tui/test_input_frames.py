"""The frame that answers a key is painted as soon as the screen is idle, not at the screen's next
timer slot; other frames keep the timer's pace (mrptui/ui_first.py `PaintsInputAtOnce`; issue 41:
a key handled within 1/60 s of the last frame waited for the next slot)."""

from __future__ import annotations

import asyncio
import time

import pytest
from conftest import make_app
from helpers import record_frames, settle
from textual import events, screen

from mrptui.widgets.status import StatusLine

SIZE = (160, 45)
SLOT_S = 60.0  # the screen's timer paints once a minute here: a frame sooner was not the timer's


async def painted(condition, seconds: float) -> bool:
    """Wait (without Pilot, whose pause paints a frame itself) until `condition()` holds."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.005)
    return True


@pytest.mark.paints
async def test_a_panel_key_is_painted_at_once_while_other_changes_wait_for_the_timer(monkeypatch) -> None:
    monkeypatch.setattr(screen, "UPDATE_PERIOD", SLOT_S)
    app = make_app()
    frames = record_frames(app, time.monotonic)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.main.action_panel("attempts")
        await pilot.pause()
        for key, panel in (("3", "evidence"), ("1", "plan"), ("4", "proofs"), ("2", "attempts")):
            target = app.main.query_one(f"#{panel}")
            seen = len(frames)
            app._driver.send_message(events.Key(key, key))  # as the terminal driver delivers it
            assert await painted(lambda: any(focused is target for _, focused in frames[seen:]), 5.0), key
        # A change that answers no input is painted by the timer, at its pace.
        seen = len(frames)
        app.main.query_one(StatusLine).show("not input")
        assert not await painted(lambda: len(frames) > seen, 0.5)
