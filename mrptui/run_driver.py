"""The app's run component: asks questions, shows a replayed trace, pulls the engine in thread
workers (through its `mrptui.run_control.RunControl`), steps the cursor, and renders the state at the
cursor (and the KB's state) on the main screen. The app routes the engine worker's messages
(`EventsArrived`, `RunHeld`, `RunEnded`) here."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from functools import partial

from textual.app import App
from textual.timer import Timer

from core.kernel.contract import Request
from core.kernel.events import Event
from mrptui.breakpoints import Breakpoint
from mrptui.conversation import ExplorerMemory
from mrptui.kb_lifecycle import KBLifecycle, quiet_gc
from mrptui.live_run import LiveRun
from mrptui.messages import EventsArrived, RunEnded, RunHeld
from mrptui.open_kb import OpenKB
from mrptui.options import ExplorerOptions
from mrptui.run_control import RunControl, Severity
from mrptui.run_pump import pump
from mrptui.screens.main import MainScreen
from mrptui.state import RunRecord, TimelineRow
from mrptui.switch_interval import while_pulling
from mrptui.ui_first import UiFirst
from mrptui.widgets.evidence_rows import prepared
from mrptui.widgets.query import QueryBox, normalise_question
from mrptui.widgets.status import status_markup
from mrptui.widgets.timeline import AttemptsTimeline

# While events arrive, the view is rendered at most this often (seconds; ~7 times a second): a
# render per message refilled every pane up to 12 times in a question, and a key pressed meanwhile
# waited behind each (issue 41). A live render and its frame cost ~60-100 ms of the UI thread, so
# at 20 a second (0.05 s) the UI thread did little else while a run lasted; at 0.15 s a question
# of ~0.2-0.5 s shows about one state between its start and its end, not two or three, and the UI
# thread's time a question falls ~20%. A hold, the end and every user step still render at once.
LIVE_RENDER_GAP_S = 0.15


class RunDriver:
    """Runs, stepping and the main screen's rendering, for one app."""

    def __init__(
        self,
        app: App,
        kb: OpenKB,
        lifecycle: KBLifecycle,
        memory: ExplorerMemory,
        main: MainScreen,
        options: ExplorerOptions,
        *,
        breakpoints: Collection[Breakpoint] = (),
        ui_first: UiFirst | None = None,
    ) -> None:
        """`app`: runs the engine workers and shows the notifications; the driver's `control` holds
        the runs, the cursor and the breakpoints. `ui_first`: where the engine worker gives way to
        the UI between events (none: it never does)."""
        self.app, self.kb, self.lifecycle, self.memory, self.main = app, kb, lifecycle, memory, main
        self.options = options
        self.ui_first = ui_first if ui_first is not None else UiFirst()
        self.control = RunControl(lambda: kb.session, self, breakpoints=breakpoints)
        self._frozen_generation = -1
        self._attempt_clock: tuple[int, float] | None = None  # (row, when its running attempt arrived)
        self._render_queued = False
        self._render_timer: Timer | None = None
        self._rendered_at = 0.0  # time.monotonic() of the last render: real time, not options.clock

    def notify(self, message: str, *, severity: Severity = "information") -> None:
        """RunControl's host says things through the app's notifications."""
        self.app.notify(message, severity=severity)

    # -- asking ------------------------------------------------------------------------------

    def refuse_in_replay(self, what: str) -> bool:
        if self.options.replay:
            self.app.notify(
                f"This is a replayed trace: {what} is disabled. Open the KB with `mrptui --kb PATH`.",
                severity="warning",
            )
        return self.options.replay

    def ask(self, question: str) -> None:
        """Run a question typed in the query box (empty: a notification, no run)."""
        if self.refuse_in_replay("asking new questions"):
            return
        question = normalise_question(question)
        if not question:
            self.app.notify("type a question first", severity="warning")
            return
        # Only a typed question is offered memory: a re-run or what-if keeps its request as it was.
        self.start_run(self.memory.offer(Request(question=question, caller=self.kb.caller)))

    def rerun(self) -> None:
        if self.refuse_in_replay("re-running"):
            return
        if self.lifecycle.state.failed:  # the re-run key tries opening the KB again
            self.lifecycle.reload()
            return
        if self.control.last_request is None:
            self.app.notify("type a question first", severity="warning")
            return
        self.start_run(self.control.last_request)

    def run_question(self, request: Request) -> None:
        """A question another screen (F4's eval) runs here: its text in the box, then its run."""
        self.main.query_one(QueryBox).value = request.question
        self.start_run(request)

    def show_replay(self, events: Sequence[Event]) -> None:
        """A saved trace as the one run (nothing is executed), its question in the box."""
        run = self.control.show_replay(events)
        query = self.main.query_one(QueryBox)
        query.value = run.question
        query.select_all()  # typing replaces it; Enter says why it cannot run

    def start_run(self, request: Request) -> None:
        state = self.lifecycle.state
        if state.loading:
            self.lifecycle.queue(request)
            return
        if state.failed:
            self.app.notify(
                f"the KB did not load, so nothing can run: {state.error.splitlines()[0]} — fix it "
                "and press ctrl+r (F8 lists every problem)",
                severity="error",
            )
            return
        # The banner warns before the first answer (and after a reload); the status line keeps the counts.
        self.main.show_health(None)
        self.control.start(request)
        self.ui_first.wake()  # the run it replaced may wait at its pause point: let it see it stops
        self.refresh_view()

    def start_puller(self, run: RunRecord, live: LiveRun) -> None:
        """RunControl's hook: pull this run in a thread worker (the UI never waits for the engine)."""
        app, options, ui_first = self.app, self.options, self.ui_first

        def work() -> None:
            try:
                with while_pulling():  # the UI thread gets the GIL back within 1 ms, not 5
                    pump(
                        run,
                        live,
                        lambda rid, events: app.post_message(EventsArrived(rid, prepared(events))),
                        lambda rid, where: app.post_message(RunHeld(rid, where)),
                        batch_size=options.batch_size,
                        batch_seconds=options.batch_seconds,
                        clock=options.clock,
                        pause=ui_first.pause,
                    )
            except KeyboardInterrupt:
                # A plugin raised it and the kernel stopped the run: it ends unanswered, the app goes on.
                pass
            finally:
                app.post_message(RunEnded(run.run_id))

        app.run_worker(
            work,
            name=f"run-{run.run_id}",
            group=f"engine-{run.run_id}",
            description=f"engine run {run.run_id}",
            thread=True,
            exit_on_error=False,
        )

    # -- what the engine worker reports ----------------------------------------------------------

    def arrived(self, message: EventsArrived) -> None:
        """Events arrive in bursts of messages: each is applied at once (cheap), the view is
        rendered once after the messages queued meanwhile, keys among them included (a render
        per message kept a key waiting behind several; issue 25, keypress while a question runs),
        and no sooner than `LIVE_RENDER_GAP_S` after the last render."""
        if self.control.arrived(message.run_id, message.events) and not self._render_queued:
            self._render_queued = True
            wait = self._rendered_at + LIVE_RENDER_GAP_S - time.monotonic()
            if wait > 0:
                self._render_timer = self.app.set_timer(wait, self._render_queued_view, name="live render")
            else:
                self.app.call_later(self._render_queued_view)

    def _render_queued_view(self) -> None:
        self._render_timer = None
        if not self._render_queued:  # a render since (a hold, the end, a step) has shown it all
            return
        held = self.ui_first.holding_s()
        if held > 0:
            # A key waits for its frame: that frame paints the key alone (a live render and its
            # frame, 60-100 ms of the UI thread at 100k, made most of a key's wait, issue 41), and
            # one render of everything that arrived meanwhile follows it.
            self.ui_first.after_answer(self._render_after_key)
            self._render_timer = self.app.set_timer(held, self._render_queued_view, name="live render")
            return
        self.refresh_view()

    def _render_after_key(self) -> None:
        """Called from inside the frame that answered the key: the render comes after that frame."""
        self._stop_render_timer()
        self.app.call_later(self._render_queued_view)

    def _render_now_or_after_key(self) -> None:
        """A hold or the run's end: rendered at once, unless a key waits for its frame."""
        self._render_queued = True
        self._stop_render_timer()
        self._render_queued_view()

    def _stop_render_timer(self) -> None:
        if self._render_timer is not None:
            self._render_timer.stop()
            self._render_timer = None

    def held_at(self, message: RunHeld) -> None:
        if self.control.held_at(message.run_id, message.where):
            self._render_now_or_after_key()

    def ended(self, message: RunEnded, kb_generation: int) -> None:
        if self.control.ended(message.run_id):
            self._render_now_or_after_key()
        if self._frozen_generation != kb_generation:
            # The first run on a KB built its indexes: freeze them too (once per KB generation, so
            # later runs' objects stay collectable).
            self._frozen_generation = kb_generation
            quiet_gc()

    def failed(self, worker_name: str, message: str) -> None:
        run = self.control.current
        if run is not None and worker_name == f"run-{run.run_id}":
            self.control.failed(run.run_id, message)
        self.refresh_view()

    def tick(self) -> None:
        """While a plugin call is under way, repaint its elapsed time a few times a second. Only
        the elapsed time is new: without durations shown there is nothing to repaint, and a render
        of the events meanwhile waits for its turn as a live render does (`LIVE_RENDER_GAP_S`);
        each tick rendered every pane, ~10% of the UI thread while questions ran (issue 41)."""
        if not self.options.show_durations or time.monotonic() - self._rendered_at < LIVE_RENDER_GAP_S:
            return
        control = self.control
        run = control.current
        running = run is not None and not run.done and not run.held and control.state.current_plugin is not None
        if running and control.following:
            self.refresh_view()

    def running_ms(self) -> float | None:
        """How long the attempt now running has run, as the UI has seen it (None when none runs)."""
        control, clock = self.control, self.options.clock
        run, state = control.current, control.state
        if run is None or run.done or run.held or not state.rows or state.rows[-1].status != "running":
            self._attempt_clock = None
            return None
        key = state.rows[-1].index
        if self._attempt_clock is None or self._attempt_clock[0] != key:
            self._attempt_clock = (key, clock())
        return (clock() - self._attempt_clock[1]) * 1000

    # -- stepping ---------------------------------------------------------------------------

    def then_refresh(self, action: Callable[[], object]) -> None:
        action()
        self.refresh_view()

    def seek(self, k: int) -> None:
        self.then_refresh(partial(self.control.seek, k))

    def step(self, delta: int) -> None:
        self.then_refresh(partial(self.control.step, delta))

    def run_to_end(self) -> None:
        self.then_refresh(self.control.run_to_end)

    def continue_run(self) -> None:
        self.then_refresh(self.control.continue_run)

    def next_stage(self) -> None:
        self.then_refresh(self.control.next_stage)

    def cancel(self) -> None:
        """Esc: cancel the live run; with nothing running, Esc does nothing (it is also "back")."""
        self.control.cancel()
        self.ui_first.wake()  # a run waiting at its pause point stops now, not when the key is painted

    def toggle_breakpoint(self, point: Breakpoint) -> None:
        self.then_refresh(partial(self.control.toggle_breakpoint, point))

    def selected_breakpoint(self, *, stage: bool) -> Breakpoint | None:
        """The breakpoint `t` (`T`: its stage's) toggles on the selected timeline row."""
        row = self.main.query_one(AttemptsTimeline).selected
        if row is None or row.kind in ("plan", "intervention"):
            self.app.notify("select an attempt or backtrack row in the timeline first", severity="warning")
            return None
        if row.kind == "backtrack" and not stage:
            return Breakpoint("backtrack")
        return Breakpoint("stage", row.stage) if stage else Breakpoint("plugin", row.plugin)

    # -- rendering --------------------------------------------------------------------------

    def show_kb_state(self) -> None:
        """The lifecycle's state changed: the loading banner and the status line show it."""
        if self.main.can_show:
            self.main.show_loading(self.lifecycle.state, self.options.kb_label)
        self.refresh_view()

    def refresh_view(self) -> None:
        main, options = self.main, self.options
        if not main.can_show:
            return
        self._rendered_at = time.monotonic()
        # This render shows every event applied so far: a live render queued for them would only
        # draw the same state again (the run's end arrived inside the gap: ~60-100 ms of UI time).
        self._render_queued = False
        self._stop_render_timer()
        control = self.control
        run, state = control.current, control.state
        total = len(run.events) if run else 0
        running = self.running_ms() if options.show_durations else None
        markup = status_markup(
            state,
            total,
            live=bool(run and not run.done),
            paused_at=control.paused_at,
            breakpoints=control.breakpoints,
            replay=options.replay,
            label=options.kb_label,
            failed=bool(run and run.error),
            held=control.held,
            pending=run.pending if run else (),
            running_ms=running,
            kb=self.lifecycle.state,
            health=self.kb.health,
            replay_note=options.replay_note,
        )
        if run and run.error:
            markup += f" · [$error]✗ {run.error}[/]"
        if run and run.notes:  # what the user undid, as ✎ you rows ahead of the run's own
            undone = tuple(
                TimelineRow(kind="intervention", index=-1, plugin="you", status="undo", reason=note)
                for note in run.notes
            )
            state = replace(state, rows=undone + state.rows)
        with main.app.batch_update():
            main.show(
                state,
                markup,
                held=bool(control.held) and control.cursor == total,
                running_ms=running,
                run=run.run_id if run else None,
                previous=control.previous,
            )
            main.freeze_fit(control.is_live and not control.held)
