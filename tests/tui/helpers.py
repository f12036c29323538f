"""Pilot helpers shared by the TUI tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

from textual.content import Content
from textual.pilot import Pilot
from textual.widgets import Static

from mrptui.app import ExplorerApp

QUESTION = "which tools are relevant for data pipelines"


def text_of(widget: Static) -> str:
    return str(widget.content)


def plain_of(widget: Static) -> str:
    """What the widget shows, without markup."""
    return Content.from_markup(str(widget.content)).plain


def record_notifications(app: ExplorerApp) -> list[str]:
    """Collect every notification message (run_test hides toasts)."""
    notes: list[str] = []
    original = app.notify

    def notify(message, *args, **kwargs):
        notes.append(str(message))
        return original(message, *args, **kwargs)

    app.notify = notify  # type: ignore[method-assign]
    return notes


def spy_calls(obj: object, name: str, note=lambda *args: args) -> list:
    """Wrap the instance's method `name`: each call appends `note(*args)` to the list returned,
    then runs the method as before."""
    calls: list = []
    method = getattr(obj, name)

    def spied(*args, **kwargs):
        calls.append(note(*args))
        return method(*args, **kwargs)

    setattr(obj, name, spied)
    return calls


def record_frames(app: ExplorerApp, clock) -> list[tuple[float, object]]:
    """Each frame the app writes to the terminal (not one inside a batch), as (`clock()`, the
    widget focused then), appended as it is written."""
    frames: list[tuple[float, object]] = []
    original = app._display

    def display(screen, update) -> None:
        original(screen, update)
        if update is not None and not app._batch_count:
            frames.append((clock(), app.focused))

    app._display = display  # type: ignore[method-assign]
    return frames


async def until(pilot: Pilot, condition, seconds: float = 20.0) -> None:
    """Wait until `condition()` holds: for state the app reaches on its own after mounting, which
    an idle check alone may report before the app has started the work."""
    import time

    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not true after {seconds} s: {condition}")
        await pilot.pause(0.01)


async def until_quiet(pilot: Pilot, seconds: float = 20.0) -> None:
    """Wait until every worker has finished, or the only ones left are an engine held at a
    breakpoint (a held engine never finishes on its own)."""
    import time

    from textual.worker import WorkerState

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        busy = [w for w in pilot.app.workers if w.state in (WorkerState.PENDING, WorkerState.RUNNING)]
        if not busy:
            return
        held = getattr(getattr(pilot.app, "control", None), "held", "")
        if held and all((w.group or "").startswith("engine-") for w in busy):
            return
        await pilot.pause(0.01)
    raise AssertionError(f"workers still busy after {seconds} s: {busy}")


async def settle(pilot: Pilot) -> None:
    """Wait for workers, then for the messages they posted from their thread, then for a render
    put off while a key waits for its frame (a key that paints nothing holds it for the gate's
    bound, `UI_FIRST_BOUND_S`), then for every DataTable to measure its new rows (it does that on
    its own Idle event)."""
    from textual.widgets import DataTable

    await until_quiet(pilot)
    await pilot.pause()
    await pilot.pause()
    runner = getattr(pilot.app, "runner", None)
    for _ in range(30):
        if runner is None or not runner.ui_first.urgent:
            break
        await pilot.pause(0.01)
    await pilot.pause()
    for _ in range(50):
        pending = [t for t in pilot.app.screen.query(DataTable) if t._require_update_dimensions or t._new_rows]
        if not pending:
            break
        await pilot.pause(0.01)
    await pilot.pause()


async def ask(pilot: Pilot, question: str = QUESTION, *, leave: bool = True) -> None:
    """Type a question in the query box, press enter, and wait for the run to finish. The box keeps
    focus after Enter; `leave` then presses Esc, so the single-letter keys that follow are commands."""
    app = pilot.app
    query = app.screen.query_one("#query")
    query.focus()
    query.value = question  # type: ignore[attr-defined]
    await pilot.press("enter")
    await settle(pilot)
    if leave and app.screen is app.main and app.focused is query:
        await pilot.press("escape")
        await pilot.pause()


async def select_timeline_row(pilot: Pilot, predicate) -> None:
    """Focus the attempts timeline and move its cursor to the first row matching `predicate`."""
    from mrptui.state import TimelineRow
    from mrptui.widgets.timeline import AttemptsTimeline

    timeline = pilot.app.screen.query_one(AttemptsTimeline)
    timeline.focus()
    index = next(i for i, entry in enumerate(timeline.entries) if isinstance(entry, TimelineRow) and predicate(entry))
    timeline.move_cursor(row=index)
    await pilot.pause()


async def focus_in_turn(
    pilot: Pilot, targets: tuple[str, ...] = ("#stock", "#kept"), rounds: int = 3
) -> AsyncIterator[None]:
    """Focus each of `targets` in turn, `rounds` times, yielding after each move has settled."""
    for target in targets * rounds:
        pilot.app.query_one(target).focus()
        await pilot.pause()
        yield
