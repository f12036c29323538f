"""Run control, on the UI thread: the runs the explorer keeps, the cursor over the current one,
breakpoints, stepping, continuing, what-if changes and cancelling. The run itself is a
`mrptui.live_run.LiveRun` pulled in a worker thread (`mrptui.run_pump.pump`); this module imports
no Textual."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Literal, Protocol

from core.kernel.contract import Request
from core.kernel.events import Event
from core.kernel.steering import Intervention, Steering, apply
from mrptui.breakpoints import Breakpoint, next_stop
from mrptui.live_run import LiveRun
from mrptui.run_points import rerun_reason, signature
from mrptui.session_seam import SessionLike
from mrptui.state import RunRecord, ViewState

HISTORY = 10  # runs kept for the diff screen


# How loud a notification is: Textual's levels.
Severity = Literal["information", "warning", "error"]


class ControlHost(Protocol):
    """What run control needs from the UI around it (the explorer's `RunDriver`)."""

    def notify(self, message: str, *, severity: Severity = "information") -> None: ...

    def refresh_view(self) -> None: ...

    def start_puller(self, run: RunRecord, live: LiveRun) -> None:
        """Run `mrptui.run_pump.pump(...)` for this run in a background thread."""


class RunControl:
    """The runs the explorer keeps, the cursor over the current one, breakpoints, and the live run.

    All methods run on the UI thread; only `LiveRun.pull` runs in the worker thread.
    """

    def __init__(
        self,
        session: Callable[[], SessionLike],
        host: ControlHost,
        *,
        history: int = HISTORY,
        breakpoints: Collection[Breakpoint] = (),
    ):
        self.session = session  # the session runs start on: the open one, whenever they start
        self.host = host
        self.history = history
        self.runs: list[RunRecord] = []
        self.cursor = 0
        self.following = True  # the cursor moves with newly arrived events
        self.paused_at: Breakpoint | None = None  # where stepping through recorded events stopped
        self.breakpoints: set[Breakpoint] = set(breakpoints)
        self.last_request: Request | None = None
        self.live: LiveRun | None = None
        self._counter = 0
        self._hold_where = ""  # where a re-run is to hold again, in words (its last hold point)

    # -- reading ------------------------------------------------------------------------------

    @property
    def current(self) -> RunRecord | None:
        return self.runs[-1] if self.runs else None

    @property
    def state(self) -> ViewState:
        run = self.current
        return run.state(self.cursor) if run else ViewState()

    @property
    def is_live(self) -> bool:
        run = self.current
        return bool(run and not run.done and self.live is not None)

    @property
    def previous(self) -> RunRecord | None:
        """The run before the live one, while the live one runs on unheld with the cursor at its end:
        the panes it has nothing for yet keep showing that run, marked stale, rather than going
        blank at its start and filling at its end (two near full-screen frames a question, issue
        41). Held, stepped back or finished, the run's own state is shown as it is. A run asked
        as another caller (ctrl+g) has no previous run: the one before showed units of that
        other caller's view, which this caller may not see (fail closed)."""
        run = self.current
        if run is None or not self.is_live or run.held or not self.following or len(self.runs) < 2:
            return None
        before = self.runs[-2]
        if before.request is None or run.request is None or before.request.caller.key != run.request.caller.key:
            return None
        return before

    @property
    def held(self) -> str:
        """'before kb-balanced (stage kb, revision 1)' while the engine is held, else ''."""
        run = self.current
        return run.held if run and self.is_live else ""

    # -- starting and receiving -----------------------------------------------------------------

    def close(self) -> None:
        """Stop pulling the live run for good (a new question replaces it, or the app quits)."""
        if self.live is not None:
            self.live.abandon()
            self.live = None

    def _add(self, run: RunRecord) -> RunRecord:
        previous = self.current
        if previous is not None and not previous.done and self.live is not None:
            where = f"while held {previous.held}" if previous.held else "before it finished"
            previous.stopped = f"stopped {where}: run {run.run_id} replaced it"
        self.close()
        self.runs = (self.runs + [run])[-self.history :]
        self.cursor = len(run.events)
        self.following, self.paused_at = True, None
        return run

    def run_by_id(self, run_id: int) -> RunRecord | None:
        return next((run for run in reversed(self.runs) if run.run_id == run_id), None)

    def show_replay(self, events: Sequence[Event]) -> RunRecord:
        """A saved trace as a finished run (nothing is executed)."""
        self._counter += 1
        return self._add(RunRecord(self._counter, None, list(events), done=True))

    def start(self, request: Request, *, hold_at: str = "", hold_where: str = "") -> RunRecord:
        """`hold_at`: the signature of the point to hold at again (`hold_where` says it in words)."""
        self._counter += 1
        run = self._add(RunRecord(self._counter, request))
        self._hold_where = hold_where
        self.last_request = request
        steering = Steering()
        costly = self._costly()
        self.live = LiveRun(
            lambda: self.session().run(request, steering=steering),
            steering,
            lambda: self.breakpoints,
            costly,
            hold_at=hold_at,
        )
        self.host.start_puller(run, self.live)
        return run

    def _costly(self) -> frozenset[str]:
        try:
            return frozenset(self.session().costly_plugins())
        except Exception:  # noqa: BLE001 - a session that cannot say holds before nothing costly
            return frozenset()

    def arrived(self, run_id: int, events: Sequence[Event]) -> bool:
        run = self.current
        if run is None or run.run_id != run_id:
            return False
        run.events.extend(events)
        if self.following:
            self.cursor = len(run.events)
        return True

    def held_at(self, run_id: int, where: str) -> bool:
        run = self.current
        if run is None or run.run_id != run_id:
            return False
        run.held = where
        if self.following:
            self.cursor = len(run.events)
        return True

    def ended(self, run_id: int) -> bool:
        run = self.current
        if run is None or run.run_id != run_id:
            return False
        run.done, run.held = True, ""
        if self.following:
            self.cursor = len(run.events)
        if self.live is not None and self.live.missed_hold:
            self.host.notify(
                f"the re-run never got to where the last one was held ({self._hold_where}): it ran to the end",
                severity="warning",
            )
        self.live = None
        return True

    def failed(self, run_id: int, message: str) -> None:
        run = self.current
        if run is not None and run.run_id == run_id:
            run.done, run.error, run.held = True, message, ""
            self.live = None

    # -- moving the cursor, releasing the engine --------------------------------------------------

    def _release(self) -> LiveRun | None:
        """The live run, about to go on: the cursor follows it again."""
        run = self.current
        if run is None or not self.is_live:
            return None
        run.held, run.pending = "", ()  # the engine takes pending changes as soon as it goes on
        self.cursor, self.following, self.paused_at = len(run.events), True, None
        return self.live

    def seek(self, k: int) -> None:
        run = self.current
        if run is None:
            return
        self.cursor = max(0, min(k, len(run.events)))
        self.following = self.cursor == len(run.events) and self.is_live
        self.paused_at = None

    def step(self, delta: int) -> None:
        run = self.current
        if run is None:
            self.host.notify("nothing to step through yet: ask a question first")
            return
        if delta < 0 or self.cursor < len(run.events):
            self.seek(self.cursor + delta)
            return
        live = self._release()
        if live is None:
            self.host.notify("at the last event")
            return
        live.step()

    def run_to_end(self) -> None:
        run = self.current
        if run is None:
            return
        live = self._release()
        if live is not None:
            live.finish()
        self.cursor, self.following, self.paused_at = len(run.events), True, None

    def continue_run(self) -> None:
        run = self.current
        if run is None:
            return
        stop, point = next_stop(run.events, self.cursor, self.breakpoints, backtracks=True)
        if point is not None:
            self.cursor, self.following, self.paused_at = stop, False, point
            return
        live = self._release()
        if live is not None:
            live.resume(backtracks=True)
            return
        self.cursor, self.paused_at = len(run.events), None
        self.host.notify("no more backtracks or breakpoints: at the end of the run")

    def next_stage(self) -> None:
        """Step to just after the next StageStarted or PlanBuilt event (running the engine to it)."""
        run = self.current
        if run is None:
            return
        for position in range(self.cursor, len(run.events)):
            if run.events[position].kind in ("stage_started", "plan_built"):
                self.seek(position + 1)
                return
        live = self._release()
        if live is not None:
            live.next_stage()
            return
        self.host.notify("no further stage in this run")
        self.seek(len(run.events))

    def toggle_breakpoint(self, point: Breakpoint) -> None:
        if point in self.breakpoints:
            self.breakpoints.discard(point)
            self.host.notify(f"breakpoint cleared: {point.label}")
        else:
            self.breakpoints.add(point)
            self.host.notify(f"breakpoint set: {point.label}")

    def cancel(self) -> bool:
        """Cancel the live run; False when nothing is running."""
        if not self.is_live or self.live is None:
            return False
        self.live.cancel()
        self.host.notify("cancelling the run…")
        return True

    # -- what-if ------------------------------------------------------------------------------------

    def intervene(self, intervention: Intervention) -> None:
        """Apply a change to the held run when it only affects what is ahead; otherwise re-run
        deterministically with the change and hold again at the same point."""
        run = self.current
        if run is None or run.request is None:
            self.host.notify("type a question first", severity="warning")
            return
        live = self.live if self.is_live and run.held else None
        reason = (
            rerun_reason(intervention, run.events, live=live is not None)
            if live
            else ("the run is not held" if self.is_live else "the run has finished")
        )
        if live is not None and not reason:
            live.intervene(intervention)
            run.request = apply(run.request, intervention)
            run.pending += (intervention.describe(),)
            self.host.notify(f"{intervention.describe()}: applied when the run goes on (n, . or g)")
            return
        hold_at, where = self.hold_signature(), run.held
        # The re-run holds again only if it reaches the same point (an exclusion can route around it).
        again = f" · holds again {where} if the re-run gets there" if hold_at else ""
        self.host.notify(f"re-running: {intervention.describe()} ({reason}){again} · d compares the two runs")
        self.start(apply(run.request, intervention), hold_at=hold_at, hold_where=where)

    def hold_signature(self) -> str:
        """Where the held live run is held, so a re-run can hold again at the same point ('' if not held)."""
        run = self.current
        live = self.live if self.is_live and run is not None and run.held else None
        return signature(live.held_event) if live is not None and live.held_event is not None else ""

    def revert(self, request: Request, note: str) -> RunRecord:
        """Re-run `request` (the run as it was before a change), holding again where this one is held."""
        hold_at, current = self.hold_signature(), self.current
        run = self.start(request, hold_at=hold_at, hold_where=current.held if current else "")
        run.notes = (note,)
        return run
