"""A KB load the test holds at chosen progress points: the load thread waits on a semaphore the
test releases (no sleeps), so every loading state lasts exactly as long as the test looks at it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from textual.pilot import Pilot

from core.infra.cancel import Cancelled
from core.infra.progress import LoadProgress, Progress

# Bounds every wait, so a broken test fails instead of hanging.
WAIT_SECONDS = 30.0


def never(_: LoadProgress) -> bool:
    return False


class HeldLoad:
    """`opener` for ExplorerApp: runs `open_session(progress)` and holds at each progress report
    for which `hold` is true, after the app has heard it, until `step()`."""

    def __init__(self, open_session: Callable[[Progress], object], hold: Callable[[LoadProgress], bool] = never):
        self.open_session = open_session
        self.hold = hold
        self.holds = 0  # how many times the load has been held so far
        self.at: LoadProgress | None = None
        self.outcome = ""  # "opened", "cancelled" or the error, once the opener returned
        self.done = threading.Event()
        self._go = threading.Semaphore(0)

    def opener(self, progress: Progress):
        def held(update: LoadProgress) -> None:
            progress(update)  # the app's: raises Cancelled once the app quits
            if self.hold(update):
                self.at = update
                self.holds += 1
                self._go.acquire(timeout=WAIT_SECONDS)

        try:
            session = self.open_session(held)
        except Cancelled:
            self.outcome = "cancelled"
            raise
        except Exception as exc:
            self.outcome = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            self.done.set()
        self.outcome = "opened"
        return session

    def step(self, hold: Callable[[LoadProgress], bool] = never) -> None:
        """Let the held load go on, holding next where `hold` says (by default: nowhere)."""
        self.hold = hold
        self._go.release()


def at(stage: str, done: int | None = None) -> Callable[[LoadProgress], bool]:
    return lambda p: p.stage == stage and (done is None or p.done == done)


def past(stage: str, done: int) -> Callable[[LoadProgress], bool]:
    """At `stage` with at least `done` finished: the build pool reports files as they finish, so
    two workers finishing together take its count from 0 straight to 2."""
    return lambda p: p.stage == stage and p.done >= done


async def until(pilot: Pilot, condition: Callable[[], bool], what: str) -> None:
    """Let the app run until `condition` holds (bounded)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"still waiting for {what}")
        await pilot.pause(0.01)
