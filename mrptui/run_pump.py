"""The explorer's engine worker: pull one `mrptui.live_run.LiveRun` and post its events to the UI
thread in batches (a batch is `batch_size` events or `batch_seconds` old, and every event before a
hold is posted before the hold is), with where it is held in the user's words. No Textual: the
caller's `post_events` and `post_held` post the messages."""

from __future__ import annotations

from collections.abc import Callable

from core.kernel.events import AttemptStarted, Event
from mrptui.breakpoints import Breakpoint
from mrptui.live_run import LiveRun
from mrptui.run_points import describe_point
from mrptui.state import RunRecord


def pump(
    run: RunRecord,
    live: LiveRun,
    post_events: Callable[[int, tuple[Event, ...]], object],
    post_held: Callable[[int, str], object],
    *,
    batch_size: int,
    batch_seconds: float,
    clock: Callable[[], float],
    pause: Callable[[Callable[[], bool]], None] = lambda stopping: None,
) -> None:
    """The worker thread's body: pull the run and post its events in batches (all of them before
    a hold), giving way at `pause` (`LiveRun.pull`)."""
    batch: list[Event] = []
    started = clock()

    def flush() -> None:
        nonlocal batch, started
        if batch:
            post_events(run.run_id, tuple(batch))
        batch, started = [], clock()

    def deliver(event: Event) -> None:
        batch.append(event)
        # A plugin call may take long after AttemptStarted: show it now, not when the call returns.
        if len(batch) >= batch_size or clock() - started >= batch_seconds or isinstance(event, AttemptStarted):
            flush()

    def on_hold(point: Breakpoint, event: Event) -> None:
        flush()
        where = describe_point(event)
        post_held(run.run_id, where if point.kind in ("step", "at") else f"{where} · {point.label}")

    try:
        live.pull(deliver, on_hold, pause)
    finally:
        flush()
