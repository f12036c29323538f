"""The explorer app: ask, watch and step through what the engine did, then fix the KB and re-run.

The app talks to one object, a `Session` (see `mrptui.state.SessionLike`). The engine runs in a
thread worker; its events reach the UI as `EventsArrived` batches. The panels always show the
state at cursor k (`RunRecord.state(k)`, a pure reduction of the first k events), so stepping back
and forth replays the recorded events and never re-executes anything.
"""

from __future__ import annotations

import dataclasses
import gc
import time
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import RootModel, ValidationError, field_validator
from textual import on
from textual.app import App
from textual.binding import Binding, BindingType
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.markup import escape
from textual.reactive import reactive
from textual.screen import ModalScreen, Screen
from textual.worker import Worker, WorkerState, get_current_worker

from core.config import ConfigError, RetrievalConfig, load_retrieval_config, read_json
from core.events import Event, write_trace
from core.health import Health
from core.plugins.base import Request
from core.resources import config_dir
from core.units import Caller
from mrptui.messages import EventsArrived, KBReloaded, OpenUnit, RunEnded, RunQuestion
from mrptui.screens.evidence_detail import EvidenceDetailScreen
from mrptui.screens.help import HelpScreen, help_for
from mrptui.screens.main import MainScreen
from mrptui.screens.modals import NO_KB_TEXT, NOT_VISIBLE, ErrorModal, PathModal, TextModal, unit_markup
from mrptui.state import (
    Breakpoint,
    NullSession,
    RunRecord,
    SessionLike,
    ViewState,
    next_stop,
    request_with,
)
from mrptui.widgets.answer import answer_markdown
from mrptui.widgets.evidence import EvidenceTable, candidates_csv
from mrptui.widgets.query import normalise_question
from mrptui.widgets.status import status_markup
from mrptui.widgets.timeline import AttemptsTimeline

Mode = Literal["follow", "continue", "to_end", "paused"]
HISTORY = 10  # runs kept for the diff screen

STAGES = ("sd", "kb", "gs", "val")
FAILED = object()  # what ask_session returns (when asked to) for a failed call


def quiet_gc() -> None:
    """Collect, then move every object alive now (the KB and its indexes above all) out of the
    cyclic garbage collector's reach. With a large KB a full collection walks millions of objects and
    stops the UI for hundreds of milliseconds, whichever thread triggers it; once they are frozen,
    collections walk only newer objects. Frozen objects are still freed by reference counting; the
    app calls this once per KB (at start, and after the first run on a KB, which builds its indexes),
    so cyclic garbage frozen with them is bounded."""
    gc.collect()
    gc.freeze()


class ExplorerCommands(Provider):
    """Every action of the current screen, plus breakpoints, pins and exclusions per plugin id."""

    def _commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        app = self.app
        if isinstance(app, ExplorerApp):
            return app.palette_commands(self.screen)
        return []

    async def discover(self) -> Hits:
        for title, help_text, callback in self._commands():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)


class ExplorerApp(App[None]):
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
    ) -> None:
        super().__init__()
        self.queries_path = queries_path  # F4's queries file; None: the bundled sample queries
        self.health: Health | None = None
        self.keymap_path = (config_dir() / KEYMAP_FILE) if keymap_path == "config" else keymap_path
        self.session: SessionLike = session if session is not None else NullSession()
        self.caller = caller or Caller()
        self.kb_label = kb_label
        self.initial_theme = theme
        self.clock = clock
        self.show_durations = show_durations
        self.replay = replay is not None
        self._replay_events = list(replay or ())
        self.cursor_blink = cursor_blink
        self.poll_interval = poll_interval
        self.batch_size = batch_size
        self.batch_seconds = batch_seconds
        self.runs: list[RunRecord] = []
        self.cursor = 0
        self.mode: Mode = "follow"
        self.paused_at: Breakpoint | None = None
        self.breakpoints: set[Breakpoint] = set()
        self.last_request: Request | None = None
        self._run_counter = 0
        self._fingerprint = ""
        self._frozen_generation = -1
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
            self._fingerprint = self._safe_fingerprint()
            if self.poll_interval > 0:
                self.set_interval(self.poll_interval, self.poll_files)
            self.run_worker(
                lambda: self.session.warm_up(self.caller),
                thread=True,
                group="warm-up",
                description="Preparing the indexes",
                exit_on_error=False,
            )

    def main_ready(self) -> None:
        """Called by the main screen once its widgets exist (after the first frame)."""
        quiet_gc()
        if self.replay and not self.runs:
            self._run_counter = 1
            run = RunRecord(1, None, list(self._replay_events), done=True)
            self.runs.append(run)
            self.cursor = len(run.events)
            self.mode = "to_end"
            query = self.main.query_one("#query")
            query.value = run.question  # type: ignore[attr-defined]
            query.disabled = True
            self.main.action_panel("attempts")
        self.refresh_health(banner=not self.runs)
        self.refresh_view()

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
            return "not in the open KB, or not visible to the trace's caller"
        return NOT_VISIBLE

    @property
    def current(self) -> RunRecord | None:
        return self.runs[-1] if self.runs else None

    @property
    def state(self) -> ViewState:
        run = self.current
        return run.state(self.cursor) if run else ViewState()

    @property
    def last_question(self) -> str:
        run = self.current
        return run.question if run else ""

    # -- running ----------------------------------------------------------------------------

    def ask(self, question: str) -> None:
        """Run a question typed in the query box (empty: a notification, no run)."""
        if self.replay:
            self.notify("This is a replayed trace: asking new questions is disabled. "
                        "Open the KB with `mrptui --kb PATH` to ask.", severity="warning")
            return
        question = normalise_question(question)
        if not question:
            self.notify("type a question first", severity="warning")
            return
        self.start_run(Request(question=question, caller=self.caller))

    def rerun(self) -> None:
        if self.replay:
            self.notify("This is a replayed trace: re-running is disabled.", severity="warning")
            return
        if self.last_request is None:
            self.notify("type a question first", severity="warning")
            return
        self.start_run(self.last_request)

    def start_run(self, request: Request) -> None:
        self._run_counter += 1
        run = RunRecord(self._run_counter, request)
        self.runs = (self.runs + [run])[-HISTORY:]
        self.last_request = request
        self.cursor = 0
        self.mode = "follow"
        self.paused_at = None
        # The banner warns before the first answer (and after a reload); the status line keeps the counts.
        self.main.show_health(None)
        self.run_worker(
            partial(self._engine, run.run_id, request), name=f"run-{run.run_id}", group="engine",
            description=f"engine run {run.run_id}", exclusive=True, thread=True, exit_on_error=False,
        )
        self.refresh_view()
        if self.main.query_one("#query").has_focus:
            self.main.action_leave_query()

    def _engine(self, run_id: int, request: Request) -> None:
        """Thread worker: pull events from the engine generator and post them in batches."""
        worker = get_current_worker()
        batch: list[Event] = []
        started = self.clock()
        try:
            for event in self.session.run(request):
                if worker.is_cancelled:
                    return
                batch.append(event)
                if len(batch) >= self.batch_size or self.clock() - started >= self.batch_seconds:
                    self.post_message(EventsArrived(run_id, tuple(batch)))
                    batch, started = [], self.clock()
        finally:
            if batch and not worker.is_cancelled:
                self.post_message(EventsArrived(run_id, tuple(batch)))
        self.post_message(RunEnded(run_id))

    @on(EventsArrived)
    def _events_arrived(self, message: EventsArrived) -> None:
        run = self.current
        if run is None or message.run_id != run.run_id:
            return
        run.events.extend(message.events)
        self._advance()
        self.refresh_view()

    @on(RunEnded)
    def _run_ended(self, message: RunEnded) -> None:
        run = self.current
        if run is not None and message.run_id == run.run_id:
            run.done = True
            self.refresh_view()
        if self._frozen_generation != self.kb_generation:
            # The first run on a KB built its indexes: freeze them too (once per KB generation, so
            # later runs' objects stay collectable).
            self._frozen_generation = self.kb_generation
            quiet_gc()

    @on(Worker.StateChanged)
    def _worker_state(self, event: Worker.StateChanged) -> None:
        """The one handler for worker errors: an error modal, never a crash."""
        if event.state != WorkerState.ERROR:
            return
        worker = event.worker
        error = worker.error
        message = f"{type(error).__name__}: {error}"
        if worker.group == "engine":
            run = self.current
            if run is not None and worker.name == f"run-{run.run_id}":
                run.done = True
                run.error = message
            self.refresh_view()
            self.push_screen(ErrorModal("Engine error", message))
        else:
            self.push_screen(ErrorModal(f"{worker.description or 'Background task'} failed", message))

    # -- stepping ---------------------------------------------------------------------------

    def _advance(self) -> None:
        run = self.current
        if run is None or self.mode == "paused":
            return
        if self.mode == "to_end":
            self.cursor = len(run.events)
            return
        stop, point = next_stop(run.events, self.cursor, self.breakpoints, backtracks=self.mode == "continue")
        self.cursor = stop
        if point is not None:
            self.mode = "paused"
            self.paused_at = point

    def seek(self, k: int) -> None:
        run = self.current
        if run is None:
            return
        self.cursor = max(0, min(k, len(run.events)))
        self.mode = "paused"
        self.paused_at = None
        self.refresh_view()

    def step(self, delta: int) -> None:
        run = self.current
        if run is None:
            self.notify("nothing to step through yet: ask a question first")
            return
        if delta > 0 and self.cursor >= len(run.events):
            self.notify("at the last event" if run.done else "waiting for the engine…")
            return
        self.seek(self.cursor + delta)

    def run_to_end(self) -> None:
        if self.current is None:
            return
        self.mode = "to_end"
        self.paused_at = None
        self._advance()
        self.refresh_view()

    def continue_run(self) -> None:
        run = self.current
        if run is None:
            return
        self.mode = "continue"
        self.paused_at = None
        self._advance()
        if self.paused_at is None and run.done and self.cursor >= len(run.events):
            self.notify("no more backtracks or breakpoints: at the end of the run")
        self.refresh_view()

    def next_stage(self) -> None:
        """Step to just after the next StageStarted or PlanBuilt event."""
        run = self.current
        if run is None:
            return
        for position in range(self.cursor, len(run.events)):
            if run.events[position].kind in ("stage_started", "plan_built"):
                self.seek(position + 1)
                return
        self.notify("no further stage in this run" if run.done else "waiting for the engine…")
        self.seek(len(run.events))

    def toggle_breakpoint(self, point: Breakpoint) -> None:
        if point in self.breakpoints:
            self.breakpoints.discard(point)
            self.notify(f"breakpoint cleared: {point.label}")
        else:
            self.breakpoints.add(point)
            self.notify(f"breakpoint set: {point.label}")
        self.refresh_view()

    def toggle_break_on_selected(self, *, stage: bool) -> None:
        row = self.main.query_one(AttemptsTimeline).selected
        if row is None or row.kind == "plan":
            self.notify("select an attempt or backtrack row in the timeline first", severity="warning")
            return
        if row.kind == "backtrack" and not stage:
            point = Breakpoint("backtrack")
        elif stage:
            point = Breakpoint("stage", row.stage)
        else:
            point = Breakpoint("plugin", row.plugin)
        self.toggle_breakpoint(point)

    # -- re-run with a plugin pinned or excluded ------------------------------------------------

    def rerun_with(
        self, *, pin: tuple[str, str] | None = None, exclude: str | None = None, planner: str | None = None
    ) -> None:
        if self.replay:
            self.notify("This is a replayed trace: re-running is disabled.", severity="warning")
            return
        if self.last_request is None:
            self.notify("type a question first", severity="warning")
            return
        request = request_with(self.last_request, pin=pin, exclude=exclude, planner=planner)
        if pin:
            what = f"{pin[1]} pinned for {pin[0]}"
        elif exclude:
            what = f"{exclude} excluded"
        else:
            what = f"planner {planner}"
        self.notify(f"re-running with {what} · d compares the two runs")
        self.start_run(request)

    def rerun_selected(self, *, pin: bool) -> None:
        row = self.main.query_one(AttemptsTimeline).selected
        if row is None or row.kind != "attempt" or not row.plugin:
            self.notify("select an attempt row in the timeline first", severity="warning")
            return
        if pin:
            self.rerun_with(pin=(row.stage, row.plugin))
        else:
            self.rerun_with(exclude=row.plugin)

    def show_diff(self) -> None:
        if len(self.runs) < 2:
            self.notify("only one run so far: pin or exclude a plugin (p/x) or ask again, then compare")
            return
        from mrptui.screens.diff import DiffScreen

        self.push_screen(DiffScreen(self.runs[-2], self.runs[-1]))

    # -- rendering --------------------------------------------------------------------------

    def refresh_view(self) -> None:
        if not self.main.is_mounted:
            return
        run = self.current
        state = self.state
        total = len(run.events) if run else 0
        markup = status_markup(
            state, total, live=bool(run and not run.done), paused_at=self.paused_at,
            breakpoints=self.breakpoints, replay=self.replay, label=self.kb_label,
            failed=bool(run and run.error), health=self.health,
        )
        if run and run.error:
            markup += f" · [$error]✗ {run.error}[/]"
        with self.batch_update():
            self.main.show(state, markup)

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
        self.push_screen(TextModal(f"Unit {unit_id}", unit_markup(unit, unit_id, missing=self.missing_unit_text)))

    def open_evidence_detail(self) -> None:
        table = self.main.query_one(EvidenceTable)
        candidate, scored = table.selected, table.current
        if candidate is None or scored is None:
            self.notify("no evidence row selected")
            return
        unit = self.ask_session("unit", candidate.id, self.caller, default=FAILED)
        if unit is FAILED:
            return
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

    def copy_focused(self) -> None:
        node = self.screen.focused
        text = None
        while node is not None:
            copy = getattr(node, "copy_text", None)
            if callable(copy):
                text = copy()
                break
            node = node.parent  # type: ignore[assignment]
        if not text:
            self.notify("nothing to copy here", severity="warning")
            return
        self.copy_to_clipboard(text)
        first = text.splitlines()[0] if text else ""
        more = "…" if len(first) > 60 or "\n" in text else ""
        self.notify(f"copied: {first[:60]}{more}")

    def _ask_path(self, title: str, default: str, write: Callable[[Path], str]) -> None:
        def done(path: str | None) -> None:
            if not path:
                return
            target = Path(path).expanduser()
            try:
                summary = write(target)
            except OSError as exc:
                self.notify(f"could not write {path}: {exc.strerror or exc}", severity="error")
                return
            self.notify(f"{summary} to {path}")

        self.push_screen(PathModal(title, default), callback=done)

    def save_trace(self) -> None:
        run = self.current
        if run is None or not run.events:
            self.notify("nothing to save yet: ask a question first", severity="warning")
            return
        events = list(run.events)

        def write(path: Path) -> str:
            write_trace(events, path)
            return f"saved {len(events)} events"

        self._ask_path("Save trace (JSON Lines)", f"./mrptui-trace-{run.run_id}.jsonl", write)

    def export_csv(self) -> None:
        scored = self.main.query_one(EvidenceTable).current
        if scored is None or self.current is None:
            self.notify("no evidence to export yet", severity="warning")
            return
        text = candidates_csv(scored)

        def write(path: Path) -> str:
            path.write_text(text, encoding="utf-8")
            return f"exported {len(scored.candidates)} rows"

        self._ask_path("Export evidence (CSV)", f"./mrptui-evidence-{self.current.run_id}.csv", write)

    def export_markdown(self) -> None:
        text = answer_markdown(self.state)
        if not text or self.current is None:
            self.notify("no answer to export yet", severity="warning")
            return

        def write(path: Path) -> str:
            path.write_text(text, encoding="utf-8")
            return "exported the answer"

        self._ask_path("Export answer (Markdown)", f"./mrptui-answer-{self.current.run_id}.md", write)

    # -- KB reload ----------------------------------------------------------------------------

    def _safe_fingerprint(self) -> str:
        try:
            return self.session.fingerprint()
        except Exception:  # noqa: BLE001 - a failing stat must not stop the app; retry next tick
            return self._fingerprint

    def poll_files(self) -> None:
        """Called every poll_interval seconds: reload when the KB or rule files changed."""
        fingerprint = self._safe_fingerprint()
        if fingerprint == self._fingerprint:
            return
        self._fingerprint = fingerprint
        self.reload_kb()

    def reload_kb(self) -> None:
        self.run_worker(self._reload, name="reload", group="reload", description="KB reload",
                        exclusive=True, thread=True, exit_on_error=False)

    def _reload(self) -> None:
        diagnostics = self.session.reload()
        self.post_message(KBReloaded(errors=sum(1 for d in diagnostics if d.is_error)))

    def refresh_health(self, *, banner: bool = True) -> None:
        self.health = self.ask_session("health", default=None)
        self.main.show_health(self.health if banner else None)

    def action_problems(self) -> None:
        problems = self.ask_session("diagnostics", default=[]) or []
        plain = "\n".join(d.format() for d in problems) or "no errors or warnings in the KB, rules or plugins"
        markup = "\n".join(("[$error]✗[/] " if d.is_error else "[$warning]⚠[/] ") + escape(d.format())
                           for d in problems) or escape(plain)
        self.push_screen(TextModal(f"Problems · {len(problems)}", markup, plain=plain))

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
        rerun = " · press r to re-run" if self.last_request is not None else ""
        if message.errors:
            self.notify(f"KB files changed: {message.errors} error(s); the last good KB is kept (see KB screen){rerun}",
                        severity="warning", timeout=8)
        else:
            self.notify(f"KB reloaded{rerun}", timeout=6)

    def open_in_editor(self, file: str, line: int) -> None:
        """Open `file` at `line` in $EDITOR (the app is suspended meanwhile), then check for changes."""
        from mrptui.screens.kb import open_in_editor

        open_in_editor(self, file, line)

    # -- screens, help, theme -------------------------------------------------------------------

    def _pop_secondary(self) -> None:
        while len(self.screen_stack) > 1 and not isinstance(self.screen, MainScreen):
            self.pop_screen()

    def action_kb_screen(self) -> None:
        from mrptui.screens.kb import KBScreen

        if isinstance(self.screen, KBScreen):
            return
        self._pop_secondary()
        self.push_screen(KBScreen())

    def action_rules_screen(self) -> None:
        from mrptui.screens.rules import RulesScreen

        if isinstance(self.screen, RulesScreen):
            return
        self._pop_secondary()
        self.push_screen(RulesScreen())

    def action_eval_screen(self) -> None:
        from mrptui.screens.eval import EvalScreen

        if isinstance(self.screen, EvalScreen):
            return
        self._pop_secondary()
        self.push_screen(EvalScreen(self.queries_path))

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss()
            return
        text, groups = help_for(self.screen)
        self.push_screen(HelpScreen(text, groups))

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.current_theme.dark else "textual-dark"

    # -- user keymap ----------------------------------------------------------------------------

    def load_keymap(self, path: Path) -> dict[str, str]:
        """Apply `path` (binding id → keys) if it exists. A bad file, an unknown id or key name is a
        notification naming the file; the default keys stay for whatever was not applied."""
        keymap, problems = read_keymap(path)
        if keymap:
            self.set_keymap(keymap)
        if problems:
            shown = "; ".join(problems[:4]) + (f"; and {len(problems) - 4} more" if len(problems) > 4 else "")
            what = "ignored those entries" if keymap else "kept the default keys"
            self.notify(f"{shown} — {what} (the binding ids are listed in docs/tui.md)", title="Keymap",
                        severity="error", timeout=12)
        return keymap

    def key_display(self, binding: Binding) -> str:
        """The key shown for `binding`, after the user keymap (first key of the remapped ones)."""
        keys = self._keymap.get(binding.id or "")
        if keys:
            binding = dataclasses.replace(binding, key=keys.split(",")[0].strip(), key_display=None)
        return self.get_key_display(binding)

    # -- command palette ------------------------------------------------------------------------

    def palette_commands(self, screen: Screen) -> list[tuple[str, str, Callable[[], object]]]:
        """Every binding of the screen (and its panels) as a command, plus per-plugin commands."""
        commands: list[tuple[str, str, Callable[[], object]]] = []
        seen: set[str] = set()
        nodes: list = [screen]
        if isinstance(screen, MainScreen):
            nodes += list(screen.query(".panel"))
        for node in nodes:
            for binding in _bindings(node):
                if binding.action in seen or binding.action.startswith("panel("):
                    continue
                seen.add(binding.action)
                key = self.key_display(binding)
                commands.append((f"{binding.description} ({key})", binding.tooltip or binding.description,
                                 partial(node.run_action, binding.action)))
        commands.append(("Toggle light/dark theme (ctrl+t)", "Switch between textual-light and textual-dark",
                         self.action_toggle_theme))
        commands.append(("Help for the focused panel (f1)", "Keys and what the panel shows", self.action_help))
        if isinstance(screen, ModalScreen) or not isinstance(screen, MainScreen):
            return commands
        commands.append(("Break on any backtrack", "Toggle: pause stepping after every backtrack",
                         partial(self.toggle_breakpoint, Breakpoint("backtrack"))))
        try:
            plugins = self.session.plugin_ids()
        except Exception:  # noqa: BLE001 - the palette must open even if the session is unhappy
            plugins = {}
        for stage in [s for s in STAGES if s in plugins] + [s for s in plugins if s not in STAGES]:
            commands.append((f"Break on stage {stage}", f"Toggle: pause when stage {stage} starts",
                             partial(self.toggle_breakpoint, Breakpoint("stage", stage))))
            for plugin in plugins[stage]:
                commands.append((f"Break on plugin {plugin}", f"Toggle: pause when {plugin} starts an attempt",
                                 partial(self.toggle_breakpoint, Breakpoint("plugin", plugin))))
                if stage == "planner":
                    commands.append((f"Start with planner {plugin} and re-run", "Re-run planned by this planner",
                                     partial(self.rerun_with, planner=plugin)))
                    continue
                commands.append((f"Pin {plugin} for {stage} and re-run", "Re-run with only this plugin in its stage",
                                 partial(self.rerun_with, pin=(stage, plugin))))
                commands.append((f"Exclude {plugin} and re-run", "Re-run without this plugin",
                                 partial(self.rerun_with, exclude=plugin)))
        return commands


def _bindings(node) -> Iterable[Binding]:
    for binding in getattr(node, "BINDINGS", []):
        if isinstance(binding, Binding) and binding.id:
            yield binding


# -- the user keymap (config/keymap.json) ---------------------------------------------------------

KEYMAP_FILE = "keymap.json"
MODIFIERS = frozenset({"ctrl", "shift", "alt", "meta", "super", "hyper"})


class KeymapFile(RootModel[dict[str, str | list[str]]]):
    """`config/keymap.json`: binding id → keys, as "ctrl+s", "ctrl+s,f9" or ["ctrl+s", "f9"]."""

    @field_validator("root")
    @classmethod
    def _non_empty(cls, value: dict[str, str | list[str]]) -> dict[str, str | list[str]]:
        for binding_id, keys in value.items():
            parts = keys if isinstance(keys, list) else keys.split(",")
            if not parts or any(not part.strip() for part in parts):
                raise ValueError(f"{binding_id!r}: an empty key")
        return value


def key_known(key: str) -> bool:
    """Whether Textual can ever report `key`: modifiers, then one character or a key name."""
    from textual.keys import KEY_NAME_REPLACEMENTS, Keys, key_to_character

    *modifiers, base = key.split("+") if key != "+" else ["+"]
    if any(m not in MODIFIERS for m in modifiers) or not base:
        return False
    names = {k.value.rsplit("+", 1)[-1] for k in Keys} | set(KEY_NAME_REPLACEMENTS.values()) | {"newline"}
    return len(base) == 1 or base in names or key_to_character(base) is not None


def binding_ids() -> dict[str, Binding]:
    """Every binding id of the explorer (all screens and widgets), for validating a keymap."""
    from mrptui.screens.diff import DiffScreen
    from mrptui.screens.eval import EvalScreen
    from mrptui.screens.kb import KBScreen
    from mrptui.screens.modals import PathModal, TextModal
    from mrptui.screens.rules import RulesScreen
    from mrptui.widgets.answer import AnswerPanel, CitationList
    from mrptui.widgets.proofs import ProofTree
    from mrptui.widgets.query import QueryBox

    classes = (ExplorerApp, MainScreen, QueryBox, AttemptsTimeline, EvidenceTable, ProofTree, AnswerPanel,
               CitationList, EvidenceDetailScreen, KBScreen, RulesScreen, DiffScreen, HelpScreen, TextModal, PathModal,
               EvalScreen)
    return {b.id: b for cls in classes for b in _bindings(cls) if b.id}


def read_keymap(path: Path) -> tuple[dict[str, str], list[str]]:
    """The usable entries of a keymap file (none when it is missing) and one line per problem."""
    if not path.is_file():
        return {}, []
    try:
        data = read_json(path)
    except ConfigError as exc:
        return {}, [d.format() for d in exc.diagnostics]
    try:
        entries = KeymapFile.model_validate(data).root
    except ValidationError as exc:
        problems: dict[str, str] = {}
        for error in exc.errors():
            where = str(error["loc"][0]) if error["loc"] else ""
            if error["type"] == "value_error":
                problems[where] = f"{path}: {error['msg'].removeprefix('Value error, ')}"
            elif not where:
                problems[where] = f"{path}: expected a JSON object of binding id → keys"
            else:
                problems[where] = f"{path}: {where}: expected keys as \"ctrl+s,f9\" or [\"ctrl+s\", \"f9\"]"
        return {}, list(problems.values())
    known = binding_ids()
    keymap: dict[str, str] = {}
    problems: list[str] = []
    for binding_id, keys in entries.items():
        parts = [part.strip() for part in (keys if isinstance(keys, list) else keys.split(","))]
        if binding_id not in known:
            problems.append(f"{path}: unknown binding id {binding_id!r}")
        elif bad := [part for part in parts if not key_known(part)]:
            problems.append(f"{path}: {binding_id}: unknown key {', '.join(map(repr, bad))}")
        else:
            keymap[binding_id] = ",".join(parts)
    return keymap, problems
