"""The explorer app, as a shell: it composes the screens, holds the components that do the work
and routes messages and keys to them.
- `RunDriver` (mrptui/run_driver.py): asking, the engine worker, stepping, rendering the cursor.
- `KBLifecycle` (mrptui/kb_lifecycle.py): opening, warming, polling and reloading the KB.
- `WhatIf` (mrptui/whatif.py): pins, exclusions, dropped units, intent edits, breakpoints, undo, diff.
- `Exporter` (mrptui/exporter.py): copy, save and export.
- `Navigator` (mrptui/navigator.py): the KB, rules, eval and help screens, problems, unit windows.
Components see the app as a `mrptui.host.Host`; screens post `Command` messages. Only the CLI
imports this module."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import ClassVar, Literal

from textual import events, on
from textual._dispatch_key import dispatch_key
from textual.app import App
from textual.binding import BindingType
from textual.reactive import reactive
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from core.kernel.events import Event
from core.kb.health import Health
from core.kernel.contract import Request
from core.infra.resources import config_dir
from core.units import Caller
from mrptui.conversation import ExplorerMemory
from mrptui.editor import open_in_editor
from mrptui.exporter import Exporter
from mrptui.focus_model import FocusModel
from mrptui.kb_lifecycle import LOADING_REASON, KBLifecycle, Opener, quiet_gc
from mrptui.kb_state import KBState
from mrptui.keymap import APP_BINDINGS, KEYMAP_FILE, apply_keymap
from mrptui.layout import layout_path as layout_file
from mrptui.messages import (Command, EventsArrived, KBLoadFailed, KBLoadProgressed, KBOpened, KBReloaded, KBWork,
                             OpenUnit, QuerySubmitted, RunEnded, RunHeld, RunQuestion)
from mrptui.navigator import Navigator
from mrptui.palette import COSTLY, ExplorerCommands, PaletteCommand, palette_commands
from mrptui.run_control import RunControl
from mrptui.run_driver import RunDriver
from mrptui.screens.main import MainScreen
from mrptui.screens.modals import ErrorModal
from mrptui.breakpoints import Breakpoint
from mrptui.session_seam import NullSession, SessionLike
from mrptui.state import RunRecord, ViewState
from mrptui.whatif import WhatIf


class ExplorerApp(App[None]):
    """The MRP-VM explorer."""

    CSS_PATH = "app.tcss"
    TITLE = "mrptui"
    COMMANDS = App.COMMANDS | {ExplorerCommands}
    BINDINGS: ClassVar[list[BindingType]] = list(APP_BINDINGS)

    kb_generation: reactive[int] = reactive(0)
    """Bumped after every KB reload, so open KB/rules screens re-read the session."""
    memory_generation: reactive[int] = reactive(0)
    """Bumped after a turn, pin, forget or clear, so an open Memory screen re-reads the records."""

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
        layout_path: Path | None | Literal["data"] = "data",
        conversation: str | None = None,
        memory_root: Path | None = None,
    ) -> None:
        """`opener`: open the session in a worker after the first frame (the CLI's way: a big KB
        takes seconds); `session` must then be None. `layout_path`: where the pane layout is kept.
        `conversation`, `memory_root`: see `mrptui.conversation.ExplorerMemory`."""
        super().__init__()
        self.queries_path = queries_path  # F4's queries file; None: there is none (F4 says so)
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
        self.runner = RunDriver(self)
        self.control = RunControl(self.session, self.runner, breakpoints=[COSTLY] if break_before_costly else [])
        self.lifecycle = KBLifecycle(self, opener)
        self.whatif = WhatIf(self)
        self.exporter = Exporter(self)
        self.navigator = Navigator(self)
        self.focus_model = FocusModel(self, self.navigator)
        self.memory = ExplorerMemory(self, conversation, memory_root)
        self.main = MainScreen(show_durations=show_durations,
                               layout_path=layout_file() if layout_path == "data" else layout_path)
        self.theme = theme

    # -- lifecycle --------------------------------------------------------------------------

    def get_default_screen(self) -> Screen:
        return self.main

    def on_mount(self) -> None:
        self.theme = self.initial_theme
        self.sub_title = self.kb_label
        if self.keymap_path is not None:
            apply_keymap(self, self.keymap_path)
        if not self.replay:
            self.set_interval(0.25, self.runner.tick, name="elapsed")

    def on_unmount(self) -> None:
        """A held engine never finishes on its own, and a load stops at its next file: let both go,
        so quitting never waits for them."""
        self.control.close()
        self.lifecycle.stop()

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
            query.select_all()  # type: ignore[attr-defined]  # typing replaces it; Enter says why it cannot run
        self.refresh_health(banner=not self.runs)
        self.show_kb_state()

    # -- what screens read (mrptui/host.py) ------------------------------------------------------

    @property
    def kb_state(self) -> KBState:
        return self.lifecycle.state

    @property
    def hdc_building(self) -> bool:
        return self.lifecycle.state.hdc == "building"

    @property
    def replay_without_kb(self) -> bool:
        """Replaying a trace with no KB open: units are ids only, and the panes say so."""
        return self.replay and isinstance(self.session, NullSession)

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
    def held(self) -> str:
        return self.control.held

    @property
    def last_question(self) -> str:
        run = self.current
        return run.question if run else ""

    def ask_session(self, method: str, *args: object, default: object = None) -> object:
        """Call a session method from the UI thread; a failure opens the error modal instead of crashing."""
        try:
            return getattr(self.session, method)(*args)
        except Exception as exc:  # noqa: BLE001 - the app must survive a failing session call
            self.push_screen(ErrorModal(f"session.{method} failed", f"{type(exc).__name__}: {exc}"))
            return default

    # -- messages from workers and screens ---------------------------------------------------------

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

    @on(KBReloaded)
    def _kb_reloaded(self, message: KBReloaded) -> None:
        self.refresh_health()
        self.refresh_view()
        self.kb_generation += 1
        rerun = " · press r to re-run" if self.control.last_request is not None else ""
        self.lifecycle.reloaded(message.errors, rerun, rebuild_hdc=message.hdc_was_ready)

    @on(EventsArrived)
    def _events_arrived(self, message: EventsArrived) -> None:
        self.runner.arrived(message)

    @on(RunHeld)
    def _run_held(self, message: RunHeld) -> None:
        self.runner.held_at(message)

    @on(RunEnded)
    def _run_ended(self, message: RunEnded) -> None:
        self.runner.ended(message)
        self.memory.ended(self.control.run_by_id(message.run_id))

    @on(Worker.StateChanged)
    def _worker_state(self, event: Worker.StateChanged) -> None:
        """The one handler for worker errors: an error modal, never a crash."""
        worker = event.worker
        self.lifecycle.worker_ended(worker.group or "", event.state)
        if event.state != WorkerState.ERROR:
            return
        message = f"{type(worker.error).__name__}: {worker.error}"
        if (worker.group or "").startswith("engine-"):
            self.runner.failed(worker.name, message)
            self.push_screen(ErrorModal("Engine error", message))
        else:
            self.push_screen(ErrorModal(f"{worker.description or 'Background task'} failed", message))

    @on(QuerySubmitted)
    def _submitted(self, message: QuerySubmitted) -> None:
        self.runner.ask(message.question)

    @on(OpenUnit)
    def _open_unit(self, message: OpenUnit) -> None:
        self.navigator.open_unit(message.unit_id)

    @on(RunQuestion)
    def _run_question(self, message: RunQuestion) -> None:
        """Another screen (F4's eval) asks to show one question's run in the main screen."""
        self.navigator.pop_secondary()
        self.main.query_one("#query").value = message.request.question  # type: ignore[attr-defined]
        self.runner.start_run(message.request)

    @on(Command)
    def _command(self, message: Command) -> None:
        runner, whatif, exporter, navigator = self.runner, self.whatif, self.exporter, self.navigator
        handlers: dict[str, Callable[..., object]] = {
            "rerun": runner.rerun, "step": runner.step, "to_end": runner.run_to_end,
            "to_start": partial(runner.seek, 0), "continue": runner.continue_run, "next_stage": runner.next_stage,
            "cancel": runner.cancel,
            "break": lambda: whatif.toggle_breakpoint(runner.selected_breakpoint(stage=False)),
            "break_stage": lambda: whatif.toggle_breakpoint(runner.selected_breakpoint(stage=True)),
            "pin": partial(whatif.rerun_selected, pin=True), "exclude": partial(whatif.rerun_selected, pin=False),
            "exclude_unit": whatif.exclude_selected_unit, "edit_intent": whatif.edit_intent,
            "diff": whatif.show_diff, "undo": whatif.undo, "toggle_breakpoint": whatif.toggle_breakpoint,
            "save": exporter.save_trace, "copy": exporter.copy_focused, "csv": exporter.export_csv,
            "markdown": exporter.export_markdown, "open_in_editor": self.open_in_editor,
            "reload": self.lifecycle.reload, "main_ready": self.main_ready,
            "evidence_detail": navigator.evidence_detail, "open_unit": navigator.open_unit,
            "memory_pin": self.memory.pin, "memory_forget": self.memory.forget, "memory_clear": self.memory.clear,
        }
        handlers[message.name](*message.args)

    # -- what components and the CLI call ------------------------------------------------------------

    def refresh_view(self) -> None:
        self.runner.refresh_view()

    def show_kb_state(self) -> None:
        """The lifecycle's state changed: the loading banner and the status line show it."""
        if self.main.can_show:
            self.main.show_loading(self.lifecycle.state, self.kb_label)
        self.refresh_view()

    def refresh_health(self, *, banner: bool = True) -> None:
        # The caller's counts: the whole KB's problems are F8's (an author surface).
        self.health = self.ask_session("health", self.caller, default=None)  # type: ignore[assignment]
        self.main.show_health(self.health if banner else None)
        for note in self.health.cache_notes if self.health is not None else ():
            if note not in self._cache_notes_told:  # a cache that cannot be written stays so: said once
                self._cache_notes_told.add(note)
                self.notify(note, title="index cache", severity="warning", timeout=10)

    def start_run(self, request: Request) -> None:
        self.runner.start_run(request)

    def poll_files(self) -> None:
        """Reload, in a worker, when the KB or rule files changed (also called after the editor)."""
        self.lifecycle.poll()

    def reload_kb(self) -> None:
        self.lifecycle.reload()

    def open_in_editor(self, file: str, line: int) -> None:
        """Open `file` at `line` in the user's editor (the app is suspended meanwhile), then check for changes."""
        open_in_editor(self, file, line)
        self.focus_model.resumed()

    def palette_commands(self, screen: Screen) -> list[PaletteCommand]:
        """Every binding of the screen (and its panels) as a command, plus per-plugin commands."""
        return palette_commands(self, screen)

    # -- the app's keys (APP_BINDINGS in mrptui/keymap.py) ----------------------------------------------

    def action_open(self, screen: str) -> None:
        """F2, F3, F4, F8 and ctrl+o: the navigator opens the screen (`kb_screen`, `problems`, …)."""
        getattr(self.navigator, screen)()

    def action_ask(self) -> None:
        self.focus_model.to_question()

    async def on_event(self, event: events.Event) -> None:
        if not (isinstance(event, events.Key) and self.focus_model.arrived(event)):
            await super().on_event(event)

    async def _on_key(self, event: events.Key) -> None:
        """App._on_key (bindings, then `key_` methods) with the focus model between them."""
        event.prevent_default()  # this replaces App._on_key
        if not await self._check_bindings(event.key) and not self.focus_model.unbound(event):
            await dispatch_key(self, event)

    def action_help(self) -> None:
        self.navigator.help()

    def action_undo(self) -> None:
        self.whatif.undo()

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.current_theme.dark else "textual-dark"
