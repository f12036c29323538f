"""Replaying a trace that stops before the run finished: its events replay, the status line says
the trace is incomplete (not "running"), and keys that need the engine are not offered."""

from __future__ import annotations

from conftest import make_app
from fakes import CALLER
from fakes import thinkingdb_run
from helpers import QUESTION, settle
from textual.content import Content

from core.plugins.base import Request
from mrptui.state import NullSession
from mrptui.widgets.keybar import KeyBar
from mrptui.widgets.status import StatusLine


def _status(app) -> str:
    return Content.from_markup(str(app.screen.query_one(StatusLine).content)).plain


async def test_a_cut_trace_replays_its_events_and_says_where_it_stopped() -> None:
    events = thinkingdb_run(Request(question=QUESTION, caller=CALLER))[:3]
    app = make_app(NullSession(), replay=events)
    async with app.run_test(size=(150, 42)) as pilot:
        await settle(pilot)
        assert app.cursor == 3
        status = _status(app)
        assert "incomplete trace: it stops after event 3" in status and "running" not in status
        await pilot.press("escape")
        await settle(pilot)
        shown = " ".join(app.screen.query_one(KeyBar).keys)
        assert "f5" not in shown.lower() and "Re-run" not in str(app.screen.query_one(KeyBar).render())
        await pilot.press("2")
        await settle(pilot)
        bar = str(app.screen.query_one(KeyBar).render())
        assert "Pin" not in bar and "Exclude" not in bar and "Break" in bar
        await pilot.press("r")  # not offered, and it does nothing
        assert app.cursor == 3 and len(app.runs) == 1


async def test_a_complete_replay_is_not_called_incomplete() -> None:
    events = thinkingdb_run(Request(question=QUESTION, caller=CALLER))
    app = make_app(NullSession(), replay=events)
    async with app.run_test(size=(150, 42)) as pilot:
        await settle(pilot)
        assert "incomplete" not in _status(app) and "replay" in _status(app)
