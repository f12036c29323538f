"""The app's what-if component: pin or exclude a plugin, drop a unit, edit the intent (live when
the engine is held, else a re-run), toggle breakpoints, undo the last of those (ctrl+z), and
compare the last two runs."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from textual.app import App

from core.kernel.contract import Request
from core.kernel.steering import Intervention
from mrptui.breakpoints import Breakpoint
from mrptui.run_driver import RunDriver
from mrptui.screens.main import MainScreen
from mrptui.screens.modals import IntentModal
from mrptui.widgets.evidence import EvidenceTable
from mrptui.widgets.timeline import AttemptsTimeline

INTENT_TEMPLATE = '@i1 intent explain "{target}"\n@i2 set $i1 output text\n'
UNDO_DEPTH = 50  # changes ctrl+z can walk back


@dataclass(frozen=True)
class Change:
    """One undoable change: a breakpoint toggled, or the request as it was before an intervention."""

    what: str
    breakpoint: Breakpoint | None = None
    before: Request | None = None


class WhatIf:
    def __init__(self, app: App, runner: RunDriver, main: MainScreen) -> None:
        self.app, self.runner, self.control, self.main = app, runner, runner.control, main
        self.changes: list[Change] = []

    def _remember(self, change: Change) -> None:
        self.changes = [*self.changes, change][-UNDO_DEPTH:]

    def intervene(self, intervention: Intervention) -> None:
        if self.runner.refuse_in_replay("changing the run"):
            return
        run = self.control.current
        before = run.request if run is not None else None
        self.runner.then_refresh(lambda: self.control.intervene(intervention))
        if before is not None:
            self._remember(Change(intervention.describe().removesuffix(" by the user"), before=before))

    def toggle_breakpoint(self, point: Breakpoint | None) -> None:
        if point is None:
            return
        was_set = point in self.control.breakpoints
        self.runner.toggle_breakpoint(point)
        self._remember(Change(f"breakpoint {'cleared' if was_set else 'set'}: {point.label}", breakpoint=point))

    def toggle_selected(self, *, stage: bool) -> None:
        """`t` (`T`): the breakpoint on the selected timeline row's plugin (its stage)."""
        self.toggle_breakpoint(self.runner.selected_breakpoint(stage=stage))

    def undo(self) -> None:
        """ctrl+z: take back the last pin, exclusion, dropped unit, edited intent or breakpoint."""
        if not self.changes:
            self.app.notify("nothing to undo: ctrl+z takes back the last pin, exclusion, dropped unit or breakpoint")
            return
        change = self.changes.pop()
        note = f"undid {change.what}"
        if change.breakpoint is not None:
            self.runner.toggle_breakpoint(change.breakpoint)
            run = self.control.current
            if run is not None:
                run.notes += (note,)
            self.runner.refresh_view()
            return
        before = change.before
        if self.runner.refuse_in_replay("changing the run") or before is None:
            return
        self.app.notify(f"{note} · re-running without it · d compares the two runs")
        self.runner.then_refresh(lambda: self.control.revert(before, note))

    def rerun_with(
        self, *, pin: tuple[str, str] | None = None, exclude: str | None = None, planner: str | None = None
    ) -> None:
        control = self.control
        if pin is not None:
            self.intervene(Intervention(kind="pin_plugin", target=pin[1], stage=pin[0]))
        elif exclude is not None:
            self.intervene(Intervention(kind="exclude_plugin", target=exclude))
        elif (
            planner is not None and control.last_request is not None and not self.runner.refuse_in_replay("re-running")
        ):
            self.app.notify(f"re-running with planner {planner} · d compares the two runs")
            self.runner.start_run(dataclasses.replace(control.last_request, planner=planner))

    def rerun_selected(self, *, pin: bool) -> None:
        row = self.main.query_one(AttemptsTimeline).selected
        if row is None or row.kind != "attempt" or not row.plugin:
            self.app.notify("select an attempt row in the timeline first", severity="warning")
            return
        if pin:
            self.rerun_with(pin=(row.stage, row.plugin))
        else:
            self.rerun_with(exclude=row.plugin)

    def exclude_selected_unit(self) -> None:
        candidate = self.main.query_one(EvidenceTable).selected
        if candidate is None:
            self.app.notify("select an evidence row first", severity="warning")
            return
        self.intervene(Intervention(kind="exclude_unit", target=candidate.id))

    def edit_intent(self) -> None:
        if self.runner.refuse_in_replay("editing the intent"):
            return
        run = self.control.current
        if run is None or run.request is None:
            self.app.notify("type a question first", severity="warning")
            return
        cnl = run.final.intent_cnl or INTENT_TEMPLATE.format(target=run.question.replace('"', "'"))

        def done(text: str | None) -> None:
            if text is not None:
                self.intervene(Intervention(kind="edit_intent", target=text))

        self.app.push_screen(IntentModal(cnl), callback=done)

    def show_diff(self) -> None:
        runs = self.control.runs
        if len(runs) < 2:
            self.app.notify(
                "only one run so far: to compare, ask another question or re-run with r "
                "(pin p or exclude x a plugin first to see what changes)"
            )
            return
        from mrptui.screens.diff import DiffScreen

        self.app.push_screen(DiffScreen(runs[-2], runs[-1]))
