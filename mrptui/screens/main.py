"""The main screen: question box, plan, attempts timeline, evidence, proofs and answer."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import ClassVar, cast

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container
from textual.markup import escape
from textual.message import Message
from textual.widgets import DataTable, Static, Tab, Tabs

from core.kb.health import Health
from mrptui.explorer import Explorer
from mrptui.kb_state import KBState
from mrptui.messages import (
    CancelRun,
    ContinueRun,
    CopyFocused,
    EditIntent,
    EvidenceDetail,
    ExcludeSelected,
    ExcludeUnit,
    ExportCsv,
    ExportMarkdown,
    MainReady,
    NextStage,
    PinSelected,
    Rerun,
    SaveTrace,
    ShowDiff,
    Step,
    ToEnd,
    ToggleBreak,
    ToStart,
)
from mrptui.screens.modals import TextModal
from mrptui.screens.panels import PANELS, PanelScreen
from mrptui.session_seam import caller_phrase
from mrptui.state import PaneName, RunRecord, ViewState, stale_panes
from mrptui.widgets.answer import AnswerPanel
from mrptui.widgets.evidence import EvidenceTable
from mrptui.widgets.keybar import KeyBar
from mrptui.widgets.loading import LoadingBanner
from mrptui.widgets.plan import PlanPanel
from mrptui.widgets.proofs import ProofTree
from mrptui.widgets.query import QueryBox
from mrptui.widgets.stale_mark import mark_stale
from mrptui.widgets.status import StatusLine, banner_markup
from mrptui.widgets.timeline import AttemptsTimeline, entry_detail
from mrptui.widgets.virtual_table import VirtualTable


def _posts(command: Callable[[], Message]) -> Callable[[MainScreen], None]:
    """An action that posts a new `command()` message to the app."""

    def action(screen: MainScreen) -> None:
        screen.post_message(command())

    return action


class MainScreen(PanelScreen):
    """Everything about one run, at the cursor's event."""

    HELP = """\
## Explorer
Ask a question, then watch or step through what the engine did. The panels show the run as it was
after event *k* of *N* (see the status line). The engine is pulled one event at a time: at a
breakpoint (and, by default, before every costly LLM or remote plugin) it is **held**, and nothing
runs until you step (`n`), continue (`.`) or run to the end (`g`). While held you can exclude or pin
a plugin (`x`/`p`), drop an evidence unit (`u`) or edit the intent (`i`): a change that only affects
what is ahead applies live, anything else re-runs and holds again at the same point. `esc` cancels
a running engine. Stepping back replays recorded events; it never re-executes anything.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f5,ctrl+r", "rerun", "Re-run", id="main.rerun", tooltip="Run the last question again"),
        Binding("r", "rerun", "Re-run", show=False, id="main.rerun_r", tooltip="Run the last question again"),
        Binding(
            "n,f10,alt+n",
            "step_forward",
            "Step",
            id="main.step",
            tooltip="One event forward (right arrow too): at the last event, let the held engine make one step",
        ),
        Binding(
            "b,shift+f10,alt+b", "step_back", "Back", id="main.back", tooltip="Step one event back (left arrow too)"
        ),
        Binding(
            "full_stop,f9",
            "continue_run",
            "Continue",
            id="main.continue",
            tooltip="Continue to the next backtrack or breakpoint (the held engine goes on)",
        ),
        Binding(
            "right_square_bracket,f11",
            "next_stage",
            "Next stage",
            id="main.next_stage",
            tooltip="Step to the start of the next stage (or plan revision)",
        ),
        Binding("g,end,alt+g", "to_end", "To end", id="main.end", tooltip="Run to the end, ignoring breakpoints"),
        Binding("escape", "cancel_run", "Cancel", show=False, id="main.cancel", tooltip="Cancel the running engine"),
        Binding(
            "i,alt+i",
            "edit_intent",
            "Intent",
            id="main.intent",
            tooltip="Edit the intent (Intent CNL): live while held before seed detection, else a re-run",
        ),
        Binding("home", "to_start", "To start", id="main.start", tooltip="Back to event 0"),
        Binding("d,alt+d", "diff", "Diff", id="main.diff", tooltip="Compare this run with the previous one"),
        Binding("s,alt+s", "save", "Save", id="main.save", tooltip="Save the trace as JSON Lines"),
        Binding("c,alt+c", "copy", "Copy", id="main.copy", tooltip="Copy the focused row, proof or answer"),
        Binding("e,alt+e", "export_csv", "CSV", id="main.csv", tooltip="Export the evidence table as CSV"),
        Binding("m,alt+m", "export_markdown", "Markdown", id="main.markdown", tooltip="Export the answer as Markdown"),
        Binding(
            "k,alt+k", "app.open('kb_screen')", "KB", show=False, id="main.kb", tooltip="The KB: units, errors, why-not"
        ),
        Binding(
            "R",
            "app.open('rules_screen')",
            "Rules",
            show=False,
            id="main.rules",
            tooltip="Rules: which fired, bindings",
        ),
        Binding(
            "slash,ctrl+l",
            "focus_query",
            "Ask",
            id="main.ask",
            priority=True,
            tooltip="Focus the question box (what you type next goes there)",
        ),
        Binding(
            "z,alt+z",
            "zoom",
            "Zoom",
            id="main.zoom",
            tooltip="Give the focused panel the whole screen, or restore the layout",
        ),
        Binding(
            "greater_than_sign",
            "resize_pane(1)",
            "Grow",
            show=False,
            id="main.grow",
            tooltip="Give the focused pane more room (its column and row)",
        ),
        Binding(
            "less_than_sign",
            "resize_pane(-1)",
            "Shrink",
            show=False,
            id="main.shrink",
            tooltip="Give the focused pane less room",
        ),
        Binding(
            "f12",
            "cycle_layout",
            "Layout",
            id="main.layout",
            tooltip="Next layout preset: balanced, debugger, evidence, answer (kept across sessions)",
        ),
        Binding("1,alt+1", "panel('plan')", "Plan", show=False, id="main.panel1"),
        Binding("2,alt+2", "panel('attempts')", "Attempts", show=False, id="main.panel2"),
        Binding("3,alt+3", "panel('evidence')", "Evidence", show=False, id="main.panel3"),
        Binding("4,alt+4", "panel('proofs')", "Proofs", show=False, id="main.panel4"),
        Binding("5,alt+5", "panel('answer')", "Answer", show=False, id="main.panel5"),
    ]

    def __init__(self, *, show_durations: bool = True, layout_path: Path | None = None) -> None:
        """`layout_path`: where the pane layout is kept across sessions (None: not kept)."""
        super().__init__(layout_path=layout_path)
        self.show_durations = show_durations

    @property
    def explorer(self) -> Explorer:
        return cast(Explorer, self.app)

    def compose(self) -> ComposeResult:
        yield QueryBox(id="query")
        loading = LoadingBanner(id="loading")
        loading.display = False
        yield loading
        banner = Static("", id="problems-banner")
        banner.display = False
        yield banner
        yield Tabs(
            *(Tab(f"{n} {label}", id=f"tab-{key}") for n, (key, label) in enumerate(PANELS, start=1)),
            id="panel-tabs",
            active=f"tab-{self.active_panel}",
        )
        with Container(id="panels"):
            plan = PlanPanel(id="plan", classes="panel")
            plan.border_title = "Plan"
            yield plan
            evidence = EvidenceTable(id="evidence", classes="panel")
            evidence.border_title = "Evidence"
            yield evidence
            timeline = AttemptsTimeline(show_durations=self.show_durations, id="attempts", classes="panel")
            timeline.border_title = "Attempts"
            yield timeline
            proofs = ProofTree(id="proofs", classes="panel")
            proofs.border_title = "Proofs"
            yield proofs
            answer = AnswerPanel(id="answer", classes="panel")
            answer.border_title = "Answer"
            yield answer
        yield StatusLine(id="status")
        yield KeyBar()

    def on_mount(self) -> None:
        query = self.query_one(QueryBox)
        query.cursor_blink = self.explorer.cursor_blink
        self._set_active(self.active_panel, focus=False)
        self._apply_layout()
        query.focus()
        self.show_loading(self.explorer.kb_state, self.explorer.kb_label)  # in the first frame already
        self.watch(self.app, "kb_generation", lambda _: self._show_caller())
        self.call_after_refresh(lambda: self.post_message(MainReady()))

    # Actions that need the engine: a replayed trace cannot run them, so they are not offered. A
    # diff needs a second run, which only the engine makes.
    _ENGINE_ACTIONS = frozenset({"rerun", "pin", "exclude", "exclude_unit", "edit_intent", "cancel_run", "diff"})

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in self._ENGINE_ACTIONS and self.explorer.replay:
            return False
        return True

    # -- rendering --------------------------------------------------------------------------

    @property
    def can_show(self) -> bool:
        """Whether the panels are there to draw into. A worker's events and KB messages queued
        behind a shutdown (or a screen change that removes the panels) reach a screen whose
        widgets are already gone: they are dropped, the run's record keeps them."""
        if not self.is_mounted or not self.is_attached:
            return False
        panels = self.query("#panels")
        # Textual marks every node of a removal as pruning at once, before it removes any of them.
        return bool(panels) and panels.first().is_attached and not panels.first()._pruning

    def show(
        self,
        state: ViewState,
        status_markup: str,
        *,
        held: bool = False,
        running_ms: float | None = None,
        run: object = None,
        previous: RunRecord | None = None,
    ) -> None:
        """Render the state at the cursor of `run` (the app calls this inside batch_update). With
        `previous` (a run just started), the panes the run has nothing for yet keep showing that
        run's final state, marked stale; the status line is the new run's."""
        if not self.can_show:
            return
        app = self.explorer
        before = previous.final if previous is not None else None
        stale = stale_panes(state, before)

        def shown(pane: PaneName) -> ViewState:
            return before if before is not None and pane in stale else state

        plan, timeline = self.query_one(PlanPanel), self.query_one(AttemptsTimeline)
        evidence, proofs, answer = self.query_one(EvidenceTable), self.query_one(ProofTree), self.query_one(AnswerPanel)
        plan.show(shown("plan"), held=held)
        timeline.show(
            shown("attempts").rows,
            app.breakpoints,
            held=held,
            running_ms=None if "attempts" in stale else running_ms,
        )
        evidence.show(shown("evidence").retrievals, previous.run_id if previous and "evidence" in stale else run)
        proofs.show(shown("proofs").proofs)
        answer.show(shown("answer"))
        for name, pane in (
            ("plan", plan),
            ("attempts", timeline),
            ("evidence", evidence),
            ("proofs", proofs),
            ("answer", answer),
        ):
            mark_stale(pane, name in stale)
        self.query_one(StatusLine).show(status_markup)

    def _show_caller(self) -> None:
        """Who the questions are asked as, always in view above them (ctrl+g changes it; a new day
        moves a date that follows the calendar, and both make a new view)."""
        self.query_one(QueryBox).border_title = f"as {escape(caller_phrase(self.explorer.caller))}"

    def show_loading(self, state: KBState, label: str) -> None:
        """The loading banner: shown while the KB loads or after it failed to."""
        if not self.can_show:
            return
        self.query_one(LoadingBanner).show(state, label)

    def show_health(self, health: Health | None) -> None:
        """The banner under the question box while units, rules or plugins have errors."""
        if not self.can_show:
            return
        banner = self.query_one("#problems-banner", Static)
        banner.display = bool(health and health.failed)
        if health and health.failed:
            banner.update(banner_markup(health))

    # -- actions ----------------------------------------------------------------------------

    @on(DataTable.RowSelected, "#attempts")
    def _attempt_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        timeline = self.query_one(AttemptsTimeline)
        entry = timeline.selected_entry
        if entry is not None:
            detail = entry_detail(entry, show_durations=timeline.show_durations)
            self.app.push_screen(TextModal("Timeline row", escape(detail), plain=detail))

    @on(VirtualTable.RowSelected, "#evidence")
    def _evidence_selected(self, event: VirtualTable.RowSelected) -> None:
        event.stop()
        self.post_message(EvidenceDetail())

    # Keys whose work is the app's: each posts its command (the app hands it to a component).
    action_rerun = _posts(Rerun)
    action_step_forward = _posts(partial(Step, 1))
    action_step_back = _posts(partial(Step, -1))
    action_to_end = _posts(ToEnd)
    action_to_start = _posts(ToStart)
    action_continue_run = _posts(ContinueRun)
    action_next_stage = _posts(NextStage)
    action_cancel_run = _posts(CancelRun)
    action_toggle_break = _posts(ToggleBreak)
    action_toggle_break_stage = _posts(partial(ToggleBreak, stage=True))
    action_pin = _posts(PinSelected)
    action_exclude = _posts(ExcludeSelected)
    action_exclude_unit = _posts(ExcludeUnit)
    action_edit_intent = _posts(EditIntent)
    action_diff = _posts(ShowDiff)
    action_save = _posts(SaveTrace)
    action_copy = _posts(CopyFocused)
    action_export_csv = _posts(ExportCsv)
    action_export_markdown = _posts(ExportMarkdown)

    def action_focus_query(self) -> None:
        # A priority binding runs as the key arrives, before the keys typed after it are sent on to
        # the focused widget; focusing now (not after a refresh) makes those keys land in the box.
        box = self.query_one(QueryBox)
        if self.focused is box:
            if not box.read_only:
                box.insert("/")  # a `/` typed inside the question is text
            return
        self.set_focus(box)

    def action_leave_query(self) -> None:
        self._set_active("attempts" if not self.narrow else self.active_panel, focus=True)
