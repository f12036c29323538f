"""Replaying a trace that stops before the run finished: its events replay, the status line says
the trace is incomplete (not "running"), and keys that need the engine are not offered."""

from __future__ import annotations

from conftest import make_app
from fake_kb import CALLER
from fake_runs import thinkingdb_run
from helpers import QUESTION, settle
from textual.content import Content

from core.kernel.contract import Request
from core.kernel.events import write_trace
from mrptui.session_seam import NullSession
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


async def test_a_trace_cut_mid_line_replays_its_complete_events_with_a_note(tmp_path) -> None:
    """The CLI path: `mrptui replay` reads the file, cut in the middle of its last line."""
    from mrptui.commands.replay import load

    events = thinkingdb_run(Request(question=QUESTION, caller=CALLER))
    path = tmp_path / "run.jsonl"
    write_trace(events, path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 25])  # mid-way through run_finished
    loaded, note = load(path)
    assert loaded == events[:-1]
    app = make_app(NullSession(), replay=loaded, replay_note=note)
    async with app.run_test(size=(150, 42)) as pilot:
        await settle(pilot)
        status = _status(app)
        assert app.cursor == len(events) - 1 and "running" not in status
        assert f"trace line {len(events)} is cut mid-event: replaying the {len(events) - 1} complete events" in status
        await pilot.press("escape", "home")
        assert app.cursor == 0 and "is cut mid-event" in _status(app)  # said at every step


def test_snapshot_replay_of_a_trace_cut_mid_line(snap_compare, tmp_path) -> None:
    from mrptui.commands.replay import load

    path = tmp_path / "run.jsonl"
    write_trace(thinkingdb_run(Request(question=QUESTION, caller=CALLER)), path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 25])
    loaded, note = load(path)

    async def run_before(pilot) -> None:
        await settle(pilot)
        pilot.app.clear_notifications()
        await pilot.pause()

    app = make_app(NullSession(), replay=loaded, replay_note=note, kb_label="replay run.jsonl")
    assert snap_compare(app, terminal_size=(150, 42), run_before=run_before)
