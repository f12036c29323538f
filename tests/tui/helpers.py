"""Pilot helpers shared by the TUI tests."""

from __future__ import annotations

from textual.pilot import Pilot

from mrptui.app import ExplorerApp

QUESTION = "which tools are relevant for data pipelines"


def record_notifications(app: ExplorerApp) -> list[str]:
    """Collect every notification message (run_test hides toasts)."""
    notes: list[str] = []
    original = app.notify

    def notify(message, *args, **kwargs):
        notes.append(str(message))
        return original(message, *args, **kwargs)

    app.notify = notify  # type: ignore[method-assign]
    return notes


async def settle(pilot: Pilot) -> None:
    """Wait for workers, then for the messages they posted from their thread, then for every
    DataTable to measure its new rows (it does that on its own Idle event)."""
    from textual.widgets import DataTable

    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()
    for _ in range(50):
        pending = [t for t in pilot.app.screen.query(DataTable) if t._require_update_dimensions or t._new_rows]
        if not pending:
            break
        await pilot.pause(0.01)
    await pilot.pause()


async def ask(pilot: Pilot, question: str = QUESTION) -> None:
    """Type a question in the query box, press enter, and wait for the run to finish."""
    app = pilot.app
    query = app.screen.query_one("#query")
    query.focus()
    query.value = question  # type: ignore[attr-defined]
    await pilot.press("enter")
    await settle(pilot)


async def select_timeline_row(pilot: Pilot, predicate) -> None:
    """Focus the attempts timeline and move its cursor to the first row matching `predicate`."""
    from mrptui.widgets.timeline import AttemptsTimeline

    timeline = pilot.app.screen.query_one(AttemptsTimeline)
    timeline.focus()
    rows = timeline._rows
    index = next(i for i, row in enumerate(rows) if predicate(row))
    timeline.move_cursor(row=index)
    await pilot.pause()
