"""While a plugin call runs, the explorer repaints its elapsed time a few times a second (the
timeline's running row); that tick repaints nothing when durations are not shown (issue 41: it
rendered every pane four times a second, ~10% of the UI thread while questions ran)."""

from __future__ import annotations

from conftest import make_app
from helpers import ask, settle, spy_calls, until
from test_stale_panes import GatedSession

from mrptui.widgets.timeline import AttemptsTimeline


def _running_cell(app) -> str:
    timeline = app.main.query_one(AttemptsTimeline)
    row = timeline.get_row_at(timeline.row_count - 1)
    return " ".join(str(cell) for cell in row)


async def _held_in_a_plugin_call(pilot, session: GatedSession) -> None:
    app = pilot.app
    await settle(pilot)
    await ask(pilot)
    session.gated = True
    await pilot.press("ctrl+r")
    await until(pilot, lambda: app.control.is_live and app.control.state.current_plugin is not None)


async def test_the_running_calls_elapsed_time_is_repainted_while_it_runs() -> None:
    session, now = GatedSession(), [0.0]
    app = make_app(session, batch_size=1, show_durations=True, clock=lambda: now[0])
    async with app.run_test(size=(160, 45)) as pilot:
        await _held_in_a_plugin_call(pilot, session)
        await until(pilot, lambda: "0…" in _running_cell(app))
        now[0] = 1.2  # nothing else happens: only the tick can show the new elapsed time
        await until(pilot, lambda: "1200…" in _running_cell(app))
        session.retrieval_gate.set()
        session.answer_gate.set()
        await settle(pilot)


async def test_without_durations_a_running_call_is_not_repainted() -> None:
    session = GatedSession()
    app = make_app(session, batch_size=1)
    async with app.run_test(size=(160, 45)) as pilot:
        await _held_in_a_plugin_call(pilot, session)
        await pilot.pause(0.3)  # the last events' render
        renders = spy_calls(app.runner, "refresh_view")
        await pilot.pause(0.8)  # three ticks or more
        assert renders == []
        session.retrieval_gate.set()
        session.answer_gate.set()
        await settle(pilot)
