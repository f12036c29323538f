"""One engine run, pulled lazily and held at breakpoints: step, continue, intervene, cancel.

The engine is a generator, and nothing runs between two pulls. `LiveRun` pulls it in a background
thread and stops pulling at a hold point (a breakpoint, or the end of a step), so a plugin the
user is held before is not called until they step or continue. The explorer (through
`mrptui.run_control.RunControl`, on the UI thread) and `mrptui ask --step` both drive runs through
this module; it imports no Textual.

    worker thread                              UI thread
    ─────────────                              ─────────
    event = next(run)  ── plugin calls ──►
    deliver(event)     ──────────────────────► events arrive, cursor follows
    hold point? ─ yes ─► on_hold(point) ─────► status "held before kb-balanced"
         wait  ◄──────── step / continue / to end / cancel / intervene (Steering)
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterator

from core.kernel.events import Event
from core.kernel.steering import Intervention, Steering
from mrptui.breakpoints import Breakpoint
from mrptui.run_points import describe_point, signature

STEP = Breakpoint("step")


class LiveRun:
    """One engine run, pulled in a background thread and held between pulls at hold points."""

    def __init__(
        self,
        start: Callable[[], Iterator[Event]],
        steering: Steering,
        breakpoints: Callable[[], Collection[Breakpoint]],
        costly: Collection[str] = (),
        hold_at: str = "",
    ):
        self._start = start
        self.steering = steering
        self._breakpoints = breakpoints
        self._costly = frozenset(costly)
        self._hold_at = hold_at  # a re-run holds again at the point the user was held at
        self._cond = threading.Condition()
        self._mode = "follow"  # follow (breakpoints), continue (+ backtracks), step, to_end
        self._steps = 0
        self._extra: Breakpoint | None = None
        self._held = False
        self._abandoned = False
        self.held_at: Breakpoint | None = None
        self.held_event: Event | None = None

    # -- the puller (worker thread) ------------------------------------------------------------

    def pull(
        self,
        deliver: Callable[[Event], None],
        on_hold: Callable[[Breakpoint, Event], None],
        pause: Callable[[Callable[[], bool]], None] = lambda stopping: None,
    ) -> None:
        """Pull until the generator ends, delivering each event and waiting at every hold point.
        Before each next event `pause(stopping)` is the UI's pause point (mrptui/ui_first.py): the
        engine waits there while a key waits for its frame. The engine starts here, in the worker
        thread, so a session that fails to start fails there."""
        events = self._start()
        for event in events:
            deliver(event)
            point = self._hold_point(event)
            if point is not None:
                # Held before anyone hears of it, so a release that comes at once is never lost.
                self._hold(point, event)
                on_hold(point, event)
                self._wait()
            if self._abandoned:
                break
            pause(self._stopping)
        close = getattr(events, "close", None)
        if close is not None:
            close()

    def _hold_point(self, event: Event) -> Breakpoint | None:
        with self._cond:
            if self._hold_at and signature(event) == self._hold_at:
                self._hold_at = ""
                return Breakpoint("at", describe_point(event))
            if self._mode == "to_end":
                return None
            if self._mode == "step":
                self._steps -= 1
                return STEP if self._steps <= 0 else None
            if self._extra is not None and self._extra.matches(event, self._costly):
                self._extra = None
                return Breakpoint("stage", "next")
            for point in sorted(self._breakpoints()):
                if point.matches(event, self._costly):
                    return point
            if self._mode == "continue" and Breakpoint("backtrack").matches(event):
                return Breakpoint("backtrack")
            return None

    def _stopping(self) -> bool:
        return self._abandoned or self.steering.cancelled

    def _hold(self, point: Breakpoint, event: Event) -> None:
        with self._cond:
            self._held, self.held_at, self.held_event = True, point, event

    def _wait(self) -> None:
        with self._cond:
            while self._held and not self._abandoned and not self.steering.cancelled:
                self._cond.wait()
            self._held, self.held_at, self.held_event = False, None, None

    # -- commands (UI thread) ------------------------------------------------------------------

    @property
    def held(self) -> bool:
        with self._cond:
            return self._held

    @property
    def missed_hold(self) -> bool:
        """The run was to hold again at a point (a re-run's) and never reached it."""
        with self._cond:
            return bool(self._hold_at)

    def _release(self, mode: str, steps: int = 0, extra: Breakpoint | None = None) -> None:
        with self._cond:
            self._mode, self._steps, self._extra = mode, steps, extra
            self._held = False
            self._cond.notify_all()

    def step(self) -> None:
        """Let exactly one more event through, then hold."""
        self._release("step", steps=1)

    def resume(self, *, backtracks: bool) -> None:
        """Go on to the next breakpoint (and, with `backtracks`, the next backtrack)."""
        self._release("continue" if backtracks else "follow")

    def next_stage(self) -> None:
        self._release("follow", extra=Breakpoint("stage", "*"))

    def finish(self) -> None:
        """Run to the end, ignoring breakpoints."""
        self._release("to_end")

    def intervene(self, intervention: Intervention) -> None:
        """Applied by the engine at its next decision, once the run is released."""
        self.steering.intervene(intervention)

    def cancel(self) -> None:
        """Stop the engine (a plugin call under way is abandoned within ~20 ms); the run ends as cancelled."""
        self.steering.cancel()
        with self._cond:
            self._cond.notify_all()

    def abandon(self) -> None:
        """Stop pulling for good (a new question replaces this run)."""
        self.steering.cancel()
        with self._cond:
            self._abandoned = True
            self._cond.notify_all()
