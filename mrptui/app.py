"""The explorer app, as a shell: it composes the screens, builds the components that do the work,
hands each its collaborators, and routes messages and keys to them.
- `OpenKB` (mrptui/open_kb.py): the one holder of the session, the caller and the KB's health.
- `CallerSwitch` (mrptui/caller_switch.py): a new caller (ctrl+g), the last question asked again as it.
- `KBHealth` (mrptui/kb_health.py): reading the KB's health as the caller sees it, and showing it.
- `KBLifecycle` (mrptui/kb_lifecycle.py): opening, warming, polling and reloading the KB.
- `KBReports` (mrptui/kb_reports.py): an opened or reloaded session handed on to those it concerns.
- `WorkerErrors` (mrptui/worker_errors.py): a worker that raised opens an error modal, never a crash.
- `RunDriver` (mrptui/run_driver.py): asking, showing a replay, the engine worker, stepping (its
  `RunControl`), rendering the cursor.
- `WhatIf` (mrptui/whatif.py): pins, exclusions, dropped units, intent edits, breakpoints, undo, diff.
- `Exporter` (mrptui/exporter.py): copy, save and export.
- `Navigator` (mrptui/navigator.py): the KB, rules, eval and help screens, problems, unit windows.
- `ExplorerMemory` (mrptui/conversation.py): follow-up questions and the Memory screen.
Screens read the app as a `mrptui.explorer.Explorer` and post the command messages of
`mrptui.messages`, one class each, handled by the `on_…` methods below. Only the CLI imports this
module."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar, Literal, TypeVar

from rich.console import RenderableType
from textual import events
from textual._dispatch_key import dispatch_key
from textual.app import App
from textual.binding import BindingType
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.worker import Worker

from core.infra.resources import config_dir
from core.kernel.events import Event
from core.units import Caller
from mrptui import messages as m
from mrptui.breakpoints import Breakpoint
from mrptui.caller_switch import CallerSwitch
from mrptui.cluster_link import ClusterLink
from mrptui.conversation import ExplorerMemory
from mrptui.editor import open_in_editor
from mrptui.exporter import Exporter
from mrptui.focus_model import FocusModel
from mrptui.kb_health import KBHealth
from mrptui.kb_lifecycle import LOADING_REASON, KBLifecycle, Opener, quiet_gc
from mrptui.kb_reports import KBReports
from mrptui.kb_state import KBState
from mrptui.keymap import APP_BINDINGS, KEYMAP_FILE, apply_keymap
from mrptui.layout import layout_path as layout_file
from mrptui.navigator import Navigator
from mrptui.open_kb import OpenKB
from mrptui.options import ExplorerOptions
from mrptui.palette import COSTLY, ExplorerCommands, PaletteCommand, palette_commands
from mrptui.run_control import RunControl
from mrptui.run_driver import RunDriver
from mrptui.screens.main import MainScreen
from mrptui.screens.modals import ErrorModal
from mrptui.session_seam import NullSession, SessionLike
from mrptui.state import RunRecord, ViewState
from mrptui.ui_first import UiFirst, input_in_flight, is_input
from mrptui.whatif import WhatIf
from mrptui.worker_errors import WorkerErrors

M = TypeVar("M", bound=Message)


def _handles(kind: type[M], hand_on: Callable[[ExplorerApp, M], object]) -> Callable[[ExplorerApp, M], None]:
    """The app's handler of `kind` messages (named `on_<kind>`, Textual's way): `hand_on(app, message)`
    hands it to the component that does it."""

    def handler(app: ExplorerApp, message: M) -> None:
        hand_on(app, message)

    return handler


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
        cluster: ClusterLink | None = None,
    ) -> None:
        """`opener`: open the session in a worker after the first frame (the CLI's way: a big KB
        takes seconds); `session` must then be None. `layout_path`: where the pane layout is kept.
        `conversation`, `memory_root`: see `mrptui.conversation.ExplorerMemory`. `cluster`: search
        the KB's shards on it (`--cluster`; with an `opener` only: it is attached in the load worker)."""
        super().__init__()
        self.keymap_path = (config_dir() / KEYMAP_FILE) if keymap_path == "config" else keymap_path
        if session is None and opener is not None:
            session = NullSession(reason=LOADING_REASON)
        self.kb = OpenKB(session if session is not None else NullSession(), caller or Caller(), self._session_failed)
        self.kb_label, self.replay, self.cursor_blink = kb_label, replay is not None, cursor_blink
        # Replay: the caller the trace names, shown only; the KB is read as `caller` (the flags).
        self.recorded_for, self._replay_events, self.initial_theme = recorded_for, list(replay or ()), theme
        options = ExplorerOptions(
            kb_label=kb_label,
            replay=self.replay,
            replay_note=replay_note,
            clock=clock,
            show_durations=show_durations,
            poll_interval=poll_interval,
            batch_size=batch_size,
            batch_seconds=batch_seconds,
            queries_path=queries_path,
        )
        self.main = MainScreen(
            show_durations=show_durations, layout_path=layout_file() if layout_path == "data" else layout_path
        )
        busy = lambda: self.control.is_live and not self.control.held  # noqa: E731 - the tagging warm-up waits
        first = self.ui_first = UiFirst()
        # Typed, not inferred: the handler table below and `busy` read them before mypy would infer them.
        self.lifecycle: KBLifecycle = KBLifecycle(
            self,
            self.kb,
            opener,
            options,
            cluster,
            busy=busy,
            pause=first.pause,
            changed=lambda: self.runner.show_kb_state(),
            new_view=self._new_view,
        )
        self.memory: ExplorerMemory = ExplorerMemory(
            self, self.kb, self._memory_changed, replay=self.replay, name=conversation, root=memory_root
        )
        breakpoints = [COSTLY] if break_before_costly else []
        self.runner: RunDriver = RunDriver(
            self, self.kb, self.lifecycle, self.memory, self.main, options, breakpoints=breakpoints, ui_first=first
        )
        self.control: RunControl = self.runner.control
        self.whatif: WhatIf = WhatIf(self, self.runner, self.main)
        self.exporter: Exporter = Exporter(self, self.kb, self.control, self.main, replay=self.replay)
        self.navigator: Navigator = Navigator(self, self.kb, self.lifecycle, self.control, self.main, options)
        self.focus_model = FocusModel(self, self.navigator, self.main)
        self.kb_health = KBHealth(self, self.kb, self.main)
        self.callers = CallerSwitch(self, self.kb, self.kb_health, self.runner, self._new_view)
        self.kb_reports = KBReports(self.lifecycle, self.kb_health, self.runner, self.focus_model, self._new_view)
        self.worker_errors = WorkerErrors(self, self.lifecycle, self.runner)
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
        self.ui_first.close()
        self.control.close()
        self.lifecycle.stop()

    def on_main_ready(self, _: m.MainReady) -> None:
        """The main screen's widgets exist (after the first frame): only now does the KB load start,
        so nothing competes with the first frame."""
        quiet_gc()
        if not self.replay:
            self.lifecycle.start()
        if self.replay and not self.runs:
            self.runner.show_replay(self._replay_events)
        self.kb_health.refresh(banner=not self.runs)
        self.runner.show_kb_state()

    # -- what screens read (mrptui/explorer.py) and tests look at ----------------------------------

    @property
    def session(self) -> SessionLike:
        return self.kb.session

    @property
    def caller(self) -> Caller:
        return self.kb.caller

    @caller.setter
    def caller(self, caller: Caller) -> None:
        self.kb.caller = caller

    @property
    def kb_state(self) -> KBState:
        return self.lifecycle.state

    @property
    def replay_without_kb(self) -> bool:
        return self.navigator.replay_without_kb

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
    def last_question(self) -> str:
        return self.current.question if self.current else ""

    # -- what components call back -------------------------------------------------------------

    def _session_failed(self, title: str, text: str) -> None:
        self.push_screen(ErrorModal(title, text))

    def _new_view(self) -> None:
        self.kb_generation += 1

    def _memory_changed(self) -> None:
        self.memory_generation += 1

    # -- messages from workers ---------------------------------------------------------------------

    on_kbload_progressed = _handles(m.KBLoadProgressed, lambda app, msg: app.lifecycle.progressed(msg.progress))
    on_kbopened = _handles(m.KBOpened, lambda app, msg: app.kb_reports.opened(msg))
    on_kbload_failed = _handles(m.KBLoadFailed, lambda app, msg: app.lifecycle.failed(msg.problems))
    on_kbwork = _handles(m.KBWork, lambda app, msg: app.lifecycle.work(msg.what, msg.caller))
    on_kbreloaded = _handles(m.KBReloaded, lambda app, msg: app.kb_reports.reloaded(msg))
    on_events_arrived = _handles(m.EventsArrived, lambda app, msg: app.runner.arrived(msg))
    on_run_held = _handles(m.RunHeld, lambda app, msg: app.runner.held_at(msg))

    def on_run_ended(self, message: m.RunEnded) -> None:
        self.runner.ended(message, self.kb_generation)
        self.memory.ended(self.control.run_by_id(message.run_id))

    on_worker_state_changed = _handles(Worker.StateChanged, lambda app, event: app.worker_errors.changed(event))

    # -- commands from screens (mrptui/messages.py): each to the component that does it ------------

    on_query_submitted = _handles(m.QuerySubmitted, lambda app, msg: app.runner.ask(msg.question))

    def on_run_question(self, message: m.RunQuestion) -> None:
        """Another screen (F4's eval) asks to show one question's run in the main screen."""
        self.navigator.pop_secondary()
        self.runner.run_question(message.request)

    on_rerun = _handles(m.Rerun, lambda app, _: app.runner.rerun())
    on_step = _handles(m.Step, lambda app, msg: app.runner.step(msg.delta))
    on_to_start = _handles(m.ToStart, lambda app, _: app.runner.seek(0))
    on_to_end = _handles(m.ToEnd, lambda app, _: app.runner.run_to_end())
    on_continue_run = _handles(m.ContinueRun, lambda app, _: app.runner.continue_run())
    on_next_stage = _handles(m.NextStage, lambda app, _: app.runner.next_stage())
    on_cancel_run = _handles(m.CancelRun, lambda app, _: app.runner.cancel())
    on_toggle_break = _handles(m.ToggleBreak, lambda app, msg: app.whatif.toggle_selected(stage=msg.stage))
    on_pin_selected = _handles(m.PinSelected, lambda app, _: app.whatif.rerun_selected(pin=True))
    on_exclude_selected = _handles(m.ExcludeSelected, lambda app, _: app.whatif.rerun_selected(pin=False))
    on_exclude_unit = _handles(m.ExcludeUnit, lambda app, _: app.whatif.exclude_selected_unit())
    on_edit_intent = _handles(m.EditIntent, lambda app, _: app.whatif.edit_intent())
    on_show_diff = _handles(m.ShowDiff, lambda app, _: app.whatif.show_diff())
    on_save_trace = _handles(m.SaveTrace, lambda app, _: app.exporter.save_trace())
    on_copy_focused = _handles(m.CopyFocused, lambda app, _: app.exporter.copy_focused())
    on_export_csv = _handles(m.ExportCsv, lambda app, _: app.exporter.export_csv())
    on_export_markdown = _handles(m.ExportMarkdown, lambda app, _: app.exporter.export_markdown())
    on_evidence_detail = _handles(m.EvidenceDetail, lambda app, _: app.navigator.evidence_detail())
    on_open_unit = _handles(m.OpenUnit, lambda app, msg: app.navigator.open_unit(msg.unit_id))
    on_open_in_editor = _handles(m.OpenInEditor, lambda app, msg: app.open_in_editor(msg.file, msg.line))
    on_reload_kb = _handles(m.ReloadKB, lambda app, _: app.lifecycle.reload())
    on_switch_caller = _handles(m.SwitchCaller, lambda app, msg: app.callers.switch(msg.choice))
    on_memory_pin = _handles(m.MemoryPin, lambda app, _: app.memory.pin(app.current))
    on_memory_forget = _handles(m.MemoryForget, lambda app, msg: app.memory.forget(msg.record_id))
    on_memory_clear = _handles(m.MemoryClear, lambda app, _: app.memory.clear())

    # -- what the CLI and the command palette call ------------------------------------------------

    def open_in_editor(self, file: str, line: int) -> None:
        """Open `file` at `line` in the user's editor (the app is suspended meanwhile), then check for changes."""
        open_in_editor(self, file, line, self.lifecycle.poll)
        self.focus_model.resumed()

    def palette_commands(self, screen: Screen) -> list[PaletteCommand]:
        """Every binding of the screen (and its panels) as a command, plus per-plugin commands."""
        return palette_commands(self, screen, self.whatif, self.session)

    # -- the app's keys (APP_BINDINGS in mrptui/keymap.py) ----------------------------------------------

    def action_open(self, screen: str) -> None:
        """F1, F2, F3, F4, F8, ctrl+o and ctrl+g: the navigator opens the screen (`kb_screen`, `help`, …)."""
        getattr(self.navigator, screen)()

    def action_ask(self) -> None:
        self.focus_model.to_question()

    def action_undo(self) -> None:
        self.whatif.undo()

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.current_theme.dark else "textual-dark"

    # -- input hooks: the focus model (mrptui/focus_model.py), UI first (mrptui/ui_first.py) -------

    async def on_event(self, event: events.Event) -> None:
        new_input = is_input(event) and not event.is_forwarded  # forwarding marks this very event
        try:
            if not (isinstance(event, events.Key) and self.focus_model.arrived(event)):
                await super().on_event(event)
        finally:
            if new_input:
                self.ui_first.handled()

    async def _on_key(self, event: events.Key) -> None:
        """App._on_key (bindings, then `key_` methods) with the focus model between them."""
        event.prevent_default()  # this replaces App._on_key
        if not await self._check_bindings(event.key) and not self.focus_model.unbound(event):
            await dispatch_key(self, event)

    def post_message(self, message: Message) -> bool:
        posted = super().post_message(message)
        if posted and is_input(message) and not message.is_forwarded:  # a key bubbling back is not new input
            self.ui_first.arrived()
        return posted

    def _display(self, screen: Screen, renderable: RenderableType | None) -> None:
        super()._display(screen, renderable)
        if renderable is not None and not self._batch_count and not input_in_flight(self):
            self.ui_first.painted()
