"""The app's what-if component: pin or exclude a plugin, drop a unit, edit the intent (live when
the engine is held, else a re-run), toggle breakpoints, undo the last of those (ctrl+z), and
compare the last two runs."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from core.kernel.contract import Request
from core.kernel.steering import Intervention
from mrptui.breakpoints import Breakpoint
from mrptui.host import Host
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
    def __init__(self, host: Host) -> None:
        self.host = host
        self.changes: list[Change] = []

    def _remember(self, change: Change) -> None:
        self.changes = [*self.changes, change][-UNDO_DEPTH:]

    def intervene(self, intervention: Intervention) -> None:
        host = self.host
        if host.runner.refuse_in_replay("changing the run"):
            return
        run = host.control.current
        before = run.request if run is not None else None
        host.runner.then_refresh(lambda: host.control.intervene(intervention))
        if before is not None:
            self._remember(Change(intervention.describe().removesuffix(" by the user"), before=before))

    def toggle_breakpoint(self, point: Breakpoint | None) -> None:
        if point is None:
            return
        was_set = point in self.host.control.breakpoints
        self.host.runner.toggle_breakpoint(point)
        self._remember(Change(f"breakpoint {'cleared' if was_set else 'set'}: {point.label}", breakpoint=point))

    def undo(self) -> None:
        """ctrl+z: take back the last pin, exclusion, dropped unit, edited intent or breakpoint."""
        host = self.host
        if not self.changes:
            host.notify("nothing to undo: ctrl+z takes back the last pin, exclusion, dropped unit or breakpoint")
            return
        change = self.changes.pop()
        note = f"undid {change.what}"
        if change.breakpoint is not None:
            host.runner.toggle_breakpoint(change.breakpoint)
            run = host.control.current
            if run is not None:
                run.notes += (note,)
            host.runner.refresh_view()
            return
        if host.runner.refuse_in_replay("changing the run") or change.before is None:
            return
        host.notify(f"{note} · re-running without it · d compares the two runs")
        host.runner.then_refresh(lambda: host.control.revert(change.before, note))

    def rerun_with(
        self, *, pin: tuple[str, str] | None = None, exclude: str | None = None, planner: str | None = None
    ) -> None:
        host = self.host
        if pin is not None:
            self.intervene(Intervention(kind="pin_plugin", target=pin[1], stage=pin[0]))
        elif exclude is not None:
            self.intervene(Intervention(kind="exclude_plugin", target=exclude))
        elif (
            planner is not None
            and host.control.last_request is not None
            and not host.runner.refuse_in_replay("re-running")
        ):
            host.notify(f"re-running with planner {planner} · d compares the two runs")
            host.runner.start_run(dataclasses.replace(host.control.last_request, planner=planner))

    def rerun_selected(self, *, pin: bool) -> None:
        row = self.host.main.query_one(AttemptsTimeline).selected
        if row is None or row.kind != "attempt" or not row.plugin:
            self.host.notify("select an attempt row in the timeline first", severity="warning")
            return
        if pin:
            self.rerun_with(pin=(row.stage, row.plugin))
        else:
            self.rerun_with(exclude=row.plugin)

    def exclude_selected_unit(self) -> None:
        candidate = self.host.main.query_one(EvidenceTable).selected
        if candidate is None:
            self.host.notify("select an evidence row first", severity="warning")
            return
        self.intervene(Intervention(kind="exclude_unit", target=candidate.id))

    def edit_intent(self) -> None:
        host = self.host
        if host.runner.refuse_in_replay("editing the intent"):
            return
        run = host.control.current
        if run is None or run.request is None:
            host.notify("type a question first", severity="warning")
            return
        cnl = run.final.intent_cnl or INTENT_TEMPLATE.format(target=run.question.replace('"', "'"))

        def done(text: str | None) -> None:
            if text is not None:
                self.intervene(Intervention(kind="edit_intent", target=text))

        host.push_screen(IntentModal(cnl), callback=done)

    def show_diff(self) -> None:
        runs = self.host.control.runs
        if len(runs) < 2:
            self.host.notify(
                "only one run so far: to compare, ask another question or re-run with r "
                "(pin p or exclude x a plugin first to see what changes)"
            )
            return
        from mrptui.screens.diff import DiffScreen

        self.host.push_screen(DiffScreen(runs[-2], runs[-1]))
