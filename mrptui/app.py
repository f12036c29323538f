"""The explorer app: ask, watch and step through what the engine did, then fix the KB and re-run.

The app talks to one object, a `Session` (see `mrptui.state.SessionLike`), and drives runs through
`mrptui.run_control`: the engine is pulled lazily in a thread worker and held at breakpoints, so
nothing runs while the user looks. The panels always show the state at cursor k
(`RunRecord.state(k)`, a pure reduction of the first k events), so stepping back replays what
already happened and never re-executes anything. Screens post `Command` messages; the app owns
run control, exports, the editor and reloads.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import ClassVar, Literal

from textual import on
from textual.app import App
from textual.binding import Binding, BindingType
from textual.markup import escape
from textual.reactive import reactive
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from core.config import ConfigError, RetrievalConfig, load_retrieval_config
from core.events import Event
from core.health import Health
from core.plugins.base import Request
from core.resources import config_dir
from core.units import Caller
from mrptui.app_exports import ExportActions
from mrptui.app_screens import ScreenActions
from mrptui.app_whatif import WhatIfActions
from mrptui.editor import open_in_editor
from mrptui.kb_lifecycle import LOADING_REASON, KBLifecycle, Opener, quiet_gc
from mrptui.kb_state import KBState
from mrptui.keymap import KEYMAP_FILE
from mrptui.messages import (Command, EventsArrived, KBLoadFailed, KBLoadProgressed, KBOpened, KBReloaded, KBWork,
                             OpenUnit, QuerySubmitted, RunEnded, RunHeld, RunQuestion)
from mrptui.palette import COSTLY, ExplorerCommands, PaletteCommand, palette_commands
from mrptui.run_control import LiveRun, RunControl, pump
from mrptui.screens.main import MainScreen
from mrptui.screens.modals import NO_KB_TEXT, NOT_VISIBLE, ErrorModal, TextModal, UnitModal
from mrptui.state import Breakpoint, NullSession, RunRecord, SessionLike, ViewState
from mrptui.widgets.evidence import EvidenceTable
from mrptui.widgets.query import normalise_question
from mrptui.widgets.status import status_markup
from mrptui.widgets.timeline import AttemptsTimeline

FAILED = object()  # what ask_session returns (when asked to) for a failed call


class ExplorerApp(WhatIfActions, ExportActions, ScreenActions, App[None]):
    """The MRP-VM explorer."""

    CSS_PATH = "app.tcss"
    TITLE = "mrptui"
    COMMANDS = App.COMMANDS | {ExplorerCommands}

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True, tooltip="Quit mrptui"),
        Binding("f1", "help", "Help", id="app.help", tooltip="Help for the focused panel"),
        Binding("ctrl+t", "toggle_theme", "Theme", id="app.theme", tooltip="Toggle the light and dark themes"),
    ]

    kb_generation: reactive[int] = reactive(0)
    """Bumped after every KB reload, so open KB/rules screens re-read the session."""

    def __init__(
        self,
        session: SessionLike | None,
        caller: Caller | None = None,
        kb_label: str = "",
        *,
        theme: str = "textual-dark",
        clock: Callable[[], float] = time.monotonic,
        show_durations: bool = True,
        replay: Sequence[Event] | None = None,
        cursor_blink: bool = True,
        poll_interval: float = 1.0,
        batch_size: int = 16,
        batch_seconds: float = 0.05,
        keymap_path: Path | None | Literal["config"] = "config",
        queries_path: Path | None = None,
        recorded_for: str = "",
        replay_note: str = "",
        break_before_costly: bool = True,
        opener: Opener | None = None,
    ) -> None:
        """`opener`: open the session in a worker after the first frame (the CLI's way: a big KB
        takes seconds); `session` must then be None."""
        super().__init__()
        self.queries_path = queries_path  # F4's queries file; None: the bundled sample queries
        self.health: Health | None = None
        self._cache_notes_told: set[str] = set()
        self.keymap_path = (config_dir() / KEYMAP_FILE) if keymap_path == "config" else keymap_path
        if session is None and opener is not None:
            session = NullSession(reason=LOADING_REASON)
        self.session: SessionLike = session if session is not None else NullSession()
        self.caller = caller or Caller()
        self.kb_label = kb_label
        self.initial_theme = theme
        self.clock = clock
        self.show_durations = show_durations
        self.replay = replay is not None
        # Replay: the caller the trace names, shown only; the KB is read as `caller` (the flags).
        self.recorded_for = recorded_for
        self._replay_events = list(replay or ())
        self.replay_note = replay_note  # where a replayed trace stops early and why (a cut or bad line)
        self.cursor_blink = cursor_blink
        self.poll_interval = poll_interval
        self.batch_size = batch_size
        self.batch_seconds = batch_seconds
        self.control = RunControl(self.session, self, breakpoints=[COSTLY] if break_before_costly else [])
        self.lifecycle = KBLifecycle(self, opener)
        self._frozen_generation = -1
        self._attempt_clock: tuple[int, float] | None = None  # (run id, when its running attempt arrived)
        self.main = MainScreen(show_durations=show_durations)
        self.theme = theme

    # -- lifecycle --------------------------------------------------------------------------

    def get_default_screen(self) -> Screen:
        return self.main

    def on_mount(self) -> None:
        self.theme = self.initial_theme
        self.sub_title = self.kb_label
        if self.keymap_path is not None:
            self.load_keymap(self.keymap_path)
        if not self.replay:
            self.set_interval(0.25, self._tick_running, name="elapsed")

    def on_unmount(self) -> None:
        """A held engine never finishes on its own, and a load stops at its next file: let both go,
        so quitting never waits for them."""
        self.control.close()
        self.lifecycle.stop()

    @property
    def hdc_building(self) -> bool:
        return self.lifecycle.state.hdc == "building"

    @property
    def kb_state(self) -> KBState:
        return self.lifecycle.state

    # -- the KB's lifecycle (mrptui/kb_lifecycle.py): its workers report with these messages ---------

    @on(KBLoadProgressed)
    def _load_progressed(self, message: KBLoadProgressed) -> None:
        self.lifecycle.progressed(message.progress)

    @on(KBOpened)
    def _kb_opened(self, message: KBOpened) -> None:
        self.lifecycle.opened(message.session, message.fingerprint)

    @on(KBLoadFailed)
    def _kb_load_failed(self, message: KBLoadFailed) -> None:
        self.lifecycle.failed(message.problems)

    @on(KBWork)
    def _kb_work(self, message: KBWork) -> None:
        self.lifecycle.work(message.what)

    def show_kb_state(self) -> None:
        """The lifecycle's state changed: the loading banner and the status line show it."""
        if self.main.is_mounted:
            self.main.show_loading(self.lifecycle.state, self.kb_label)
        self.refresh_view()

    def main_ready(self) -> None:
        """Called by the main screen once its widgets exist (after the first frame): only now does
        the KB load start, so nothing competes with the first frame."""
        quiet_gc()
        if not self.replay:
            self.lifecycle.start()
        if self.replay and not self.runs:
            run = self.control.show_replay(self._replay_events)
            query = self.main.query_one("#query")
            query.value = run.question  # type: ignore[attr-defined]
            query.disabled = True
            self.main.action_panel("attempts")
        self.refresh_health(banner=not self.runs)
        self.show_kb_state()

    @property
    def replay_without_kb(self) -> bool:
        """Replaying a trace with no KB open: units are ids only, and the panes say so."""
        return self.replay and isinstance(self.session, NullSession)

    @property
    def missing_unit_text(self) -> str:
        """Why a unit has no text here."""
        if self.replay_without_kb:
            return NO_KB_TEXT
        if self.replay:
            return "not in the open KB, or not visible to this caller"
        return NOT_VISIBLE

    # -- run control state, as the screens read it ------------------------------------------------

    @property
    def runs(self) -> list[RunRecord]:
        return self.control.runs

    @property
    def current(self) -> RunRecord | None:
        return self.control.current

    @property
    def cursor(self) -> int:
        return self.control.cursor

    @property
    def state(self) -> ViewState:
        return self.control.state

    @property
    def breakpoints(self) -> set[Breakpoint]:
        return self.control.breakpoints

    @property
    def paused_at(self) -> Breakpoint | None:
        return self.control.paused_at

    @property
    def held(self) -> str:
        return self.control.held

    @property
    def last_request(self) -> Request | None:
        return self.control.last_request

    @property
    def last_question(self) -> str:
        run = self.current
        return run.question if run else ""

    # -- running ----------------------------------------------------------------------------

    def _refuse_in_replay(self, what: str) -> bool:
        if self.replay:
            self.notify(f"This is a replayed trace: {what} is disabled. Open the KB with `mrptui --kb PATH`.",
                        severity="warning")
        return self.replay

    def ask(self, question: str) -> None:
        """Run a question typed in the query box (empty: a notification, no run)."""
        if self._refuse_in_replay("asking new questions"):
            return
        question = normalise_question(question)
        if not question:
            self.notify("type a question first", severity="warning")
            return
        self.start_run(Request(question=question, caller=self.caller))

    def rerun(self) -> None:
        if self._refuse_in_replay("re-running"):
            return
        if self.lifecycle.state.failed:  # the re-run key tries opening the KB again
            self.lifecycle.reload()
            return
        if self.last_request is None:
            self.notify("type a question first", severity="warning")
            return
        self.start_run(self.last_request)

    def start_run(self, request: Request) -> None:
        state = self.lifecycle.state
        if state.loading:
            self.lifecycle.queue(request)
            return
        if state.failed:
            self.notify(f"the KB did not load, so nothing can run: {state.error.splitlines()[0]} — fix it "
                        "and press ctrl+r (F8 lists every problem)", severity="error")
            return
        # The banner warns before the first answer (and after a reload); the status line keeps the counts.
        self.main.show_health(None)
        self.control.start(request)
        self.refresh_view()
        if self.main.query_one("#query").has_focus:
            self.main.action_leave_query()

    def start_puller(self, run: RunRecord, live: LiveRun) -> None:
        """RunControl's hook: pull this run in a thread worker (the UI never waits for the engine)."""
        def work() -> None:
            try:
                pump(run, live, lambda rid, events: self.post_message(EventsArrived(rid, events)),
                     lambda rid, where: self.post_message(RunHeld(rid, where)),
                     batch_size=self.batch_size, batch_seconds=self.batch_seconds, clock=self.clock)
            except KeyboardInterrupt:
                # A plugin raised it and the kernel stopped the run: it ends unanswered, the app goes on.
                pass
            finally:
                self.post_message(RunEnded(run.run_id))

        self.run_worker(work, name=f"run-{run.run_id}", group=f"engine-{run.run_id}",
                        description=f"engine run {run.run_id}", thread=True, exit_on_error=False)

    @on(EventsArrived)
    def _events_arrived(self, message: EventsArrived) -> None:
        if self.control.arrived(message.run_id, message.events):
            self.refresh_view()

    @on(RunHeld)
    def _run_held(self, message: RunHeld) -> None:
        if self.control.held_at(message.run_id, message.where):
            self.refresh_view()

    @on(RunEnded)
    def _run_ended(self, message: RunEnded) -> None:
        if self.control.ended(message.run_id):
            self.refresh_view()
        if self._frozen_generation != self.kb_generation:
            # The first run on a KB built its indexes: freeze them too (once per KB generation, so
            # later runs' objects stay collectable).
            self._frozen_generation = self.kb_generation
            quiet_gc()

    @on(Worker.StateChanged)
    def _worker_state(self, event: Worker.StateChanged) -> None:
        """The one handler for worker errors: an error modal, never a crash."""
        self.lifecycle.worker_ended(event.worker.group or "", event.state)
        if event.state != WorkerState.ERROR:
            return
        worker = event.worker
        error = worker.error
        message = f"{type(error).__name__}: {error}"
        if (worker.group or "").startswith("engine-"):
            run = self.current
            if run is not None and worker.name == f"run-{run.run_id}":
                self.control.failed(run.run_id, message)
            self.refresh_view()
            self.push_screen(ErrorModal("Engine error", message))
        else:
            self.push_screen(ErrorModal(f"{worker.description or 'Background task'} failed", message))

    def _tick_running(self) -> None:
        """While a plugin call is under way, repaint its elapsed time a few times a second."""
        run = self.current
        running = run is not None and not run.done and not run.held and self.state.current_plugin is not None
        if running and self.control.following:
            self.refresh_view()

    def running_ms(self) -> float | None:
        """How long the attempt now running has run, as the UI has seen it (None when none runs)."""
        run = self.current
        state = self.state
        if run is None or run.done or run.held or not state.rows or state.rows[-1].status != "running":
            self._attempt_clock = None
            return None
        key = state.rows[-1].index
        if self._attempt_clock is None or self._attempt_clock[0] != key:
            self._attempt_clock = (key, self.clock())
        return (self.clock() - self._attempt_clock[1]) * 1000

    # -- stepping ---------------------------------------------------------------------------

    def _then_refresh(self, action: Callable[[], object]) -> None:
        action()
        self.refresh_view()

    def seek(self, k: int) -> None:
        self._then_refresh(partial(self.control.seek, k))

    def step(self, delta: int) -> None:
        self._then_refresh(partial(self.control.step, delta))

    def run_to_end(self) -> None:
        self._then_refresh(self.control.run_to_end)

    def continue_run(self) -> None:
        self._then_refresh(self.control.continue_run)

    def next_stage(self) -> None:
        self._then_refresh(self.control.next_stage)

    def cancel_run(self) -> None:
        """Esc: cancel the live run; with nothing running, Esc does nothing (it is also "back")."""
        self.control.cancel()

    def toggle_breakpoint(self, point: Breakpoint) -> None:
        self._then_refresh(partial(self.control.toggle_breakpoint, point))

    def toggle_break_on_selected(self, *, stage: bool) -> None:
        row = self.main.query_one(AttemptsTimeline).selected
        if row is None or row.kind in ("plan", "intervention"):
            self.notify("select an attempt or backtrack row in the timeline first", severity="warning")
            return
        if row.kind == "backtrack" and not stage:
            point = Breakpoint("backtrack")
        elif stage:
            point = Breakpoint("stage", row.stage)
        else:
            point = Breakpoint("plugin", row.plugin)
        self.toggle_breakpoint(point)

    # -- rendering --------------------------------------------------------------------------

    def refresh_view(self) -> None:
        if not self.main.is_mounted:
            return
        run = self.current
        state = self.state
        total = len(run.events) if run else 0
        running = self.running_ms() if self.show_durations else None
        markup = status_markup(
            state, total, live=bool(run and not run.done), paused_at=self.paused_at,
            breakpoints=self.breakpoints, replay=self.replay, label=self.kb_label,
            failed=bool(run and run.error), held=self.held, pending=run.pending if run else (),
            running_ms=running, kb=self.lifecycle.state, health=self.health, replay_note=self.replay_note,
        )
        if run and run.error:
            markup += f" · [$error]✗ {run.error}[/]"
        with self.batch_update():
            self.main.show(state, markup, held=bool(self.held) and self.cursor == total, running_ms=running,
                           run=run.run_id if run else None)

    # -- units, detail, copy, save, export ------------------------------------------------------

    def ask_session(self, method: str, *args: object, default: object = None) -> object:
        """Call a session method from the UI thread; a failure opens the error modal instead of crashing."""
        try:
            return getattr(self.session, method)(*args)
        except Exception as exc:  # noqa: BLE001 - the app must survive a failing session call
            self.push_screen(ErrorModal(f"session.{method} failed", f"{type(exc).__name__}: {exc}"))
            return default

    @on(OpenUnit)
    def _open_unit(self, message: OpenUnit) -> None:
        self.open_unit(message.unit_id)

    def open_unit(self, unit_id: str) -> None:
        unit = self.ask_session("unit", unit_id, self.caller, default=FAILED)
        if unit is FAILED:
            return
        self.push_screen(UnitModal(unit, unit_id, missing=self.missing_unit_text))

    def open_evidence_detail(self) -> None:
        table = self.main.query_one(EvidenceTable)
        candidate, scored = table.selected, table.current
        if candidate is None or scored is None:
            self.notify("no evidence row selected")
            return
        unit = self.ask_session("unit", candidate.id, self.caller, default=FAILED)
        if unit is FAILED:
            return
        from mrptui.screens.evidence_detail import EvidenceDetailScreen  # numpy: not before the first frame

        config, source = self.retrieval_config()
        self.push_screen(EvidenceDetailScreen(candidate, scored, unit, missing=self.missing_unit_text,
                                              retrieval=config, retrieval_source=source))

    def retrieval_config(self) -> tuple[RetrievalConfig, str]:
        """The fusion weights to explain scores with, and where they come from."""
        config = getattr(self.session, "retrieval", None)
        if isinstance(config, RetrievalConfig):
            return config, "the session's retrieval config" + (", as it is now" if self.replay else "")
        try:
            return load_retrieval_config(), "config/retrieval.json as it is now; the trace does not record it"
        except ConfigError:
            return RetrievalConfig(profiles={}), "built-in defaults; config/retrieval.json is unusable"

    # -- commands from the screens ----------------------------------------------------------------

    @on(QuerySubmitted)
    def _submitted(self, message: QuerySubmitted) -> None:
        self.ask(message.question)

    @on(Command)
    def _command(self, message: Command) -> None:
        handlers: dict[str, Callable[..., object]] = {
            "rerun": self.rerun, "step": self.step, "to_end": self.run_to_end, "to_start": partial(self.seek, 0),
            "continue": self.continue_run, "next_stage": self.next_stage, "cancel": self.cancel_run,
            "break": partial(self.toggle_break_on_selected, stage=False),
            "break_stage": partial(self.toggle_break_on_selected, stage=True),
            "pin": partial(self.rerun_selected, pin=True), "exclude": partial(self.rerun_selected, pin=False),
            "exclude_unit": self.exclude_selected_unit, "edit_intent": self.edit_intent, "diff": self.show_diff,
            "save": self.save_trace, "copy": self.copy_focused, "csv": self.export_csv,
            "markdown": self.export_markdown, "open_in_editor": self.open_in_editor, "reload": self.reload_kb,
            "main_ready": self.main_ready, "evidence_detail": self.open_evidence_detail, "open_unit": self.open_unit,
        }
        handlers[message.name](*message.args)

    # -- KB reload ----------------------------------------------------------------------------

    def poll_files(self) -> None:
        """Reload, in a worker, when the KB or rule files changed (also called after the editor)."""
        self.lifecycle.poll()

    def reload_kb(self) -> None:
        self.lifecycle.reload()

    def refresh_health(self, *, banner: bool = True) -> None:
        # The caller's counts: the whole KB's problems are F8's (an author surface).
        self.health = self.ask_session("health", self.caller, default=None)
        self.main.show_health(self.health if banner else None)
        for note in self.health.cache_notes if self.health is not None else ():
            if note not in self._cache_notes_told:  # a cache that cannot be written stays so: said once
                self._cache_notes_told.add(note)
                self.notify(note, title="index cache", severity="warning", timeout=10)

    def action_problems(self) -> None:
        if self.lifecycle.refuse_while_loading("the problems list"):
            return
        problems = self.ask_session("diagnostics", default=[]) or []
        plain = "\n".join(d.format() for d in problems) or "no errors or warnings in the KB, rules or plugins"
        markup = "\n".join(("[$error]✗[/] " if d.is_error else "[$warning]⚠[/] ") + escape(d.format())
                           for d in problems) or escape(plain)
        # The whole KB's problems, restricted units' included: an author surface (docs/security.md).
        self.push_screen(TextModal(f"Problems · {len(problems)} · author view: whole KB", markup, plain=plain))

    @on(RunQuestion)
    def _run_question(self, message: RunQuestion) -> None:
        """Another screen (F4's eval) asks to show one question's run in the main screen."""
        self._pop_secondary()
        self.main.query_one("#query").value = message.request.question  # type: ignore[attr-defined]
        self.start_run(message.request)

    @on(KBReloaded)
    def _kb_reloaded(self, message: KBReloaded) -> None:
        self.refresh_health()
        self.refresh_view()
        self.kb_generation += 1
        self.lifecycle.reloaded(message.errors, " · press r to re-run" if self.last_request is not None else "",
                                rebuild_hdc=message.hdc_was_ready)

    def open_in_editor(self, file: str, line: int) -> None:
        """Open `file` at `line` in the user's editor (the app is suspended meanwhile), then check for changes."""
        open_in_editor(self, file, line)

    # -- command palette (mrptui/palette.py) -------------------------------------------------------

    def palette_commands(self, screen: Screen) -> list[PaletteCommand]:
        """Every binding of the screen (and its panels) as a command, plus per-plugin commands."""
        return palette_commands(self, screen)
