"""The explorer's what-if actions: pin or exclude a plugin, exclude a unit, edit the intent (live
when the engine is held, else a re-run), and compare the last two runs. A mixin of ExplorerApp,
which supplies the run control, the screens and `start_run`."""

from __future__ import annotations

import dataclasses
from functools import partial

from core.steering import Intervention
from mrptui.screens.modals import IntentModal
from mrptui.widgets.evidence import EvidenceTable
from mrptui.widgets.timeline import AttemptsTimeline

INTENT_TEMPLATE = '@i1 intent explain "{target}"\n@i2 set $i1 output text\n'


class WhatIfActions:
    def intervene(self, intervention: Intervention) -> None:
        if self._refuse_in_replay("changing the run"):
            return
        self._then_refresh(partial(self.control.intervene, intervention))

    def rerun_with(self, *, pin: tuple[str, str] | None = None, exclude: str | None = None,
                   planner: str | None = None) -> None:
        if pin is not None:
            self.intervene(Intervention(kind="pin_plugin", target=pin[1], stage=pin[0]))
        elif exclude is not None:
            self.intervene(Intervention(kind="exclude_plugin", target=exclude))
        elif planner is not None and self.last_request is not None and not self._refuse_in_replay("re-running"):
            self.notify(f"re-running with planner {planner} · d compares the two runs")
            self.start_run(dataclasses.replace(self.last_request, planner=planner))

    def rerun_selected(self, *, pin: bool) -> None:
        row = self.main.query_one(AttemptsTimeline).selected
        if row is None or row.kind != "attempt" or not row.plugin:
            self.notify("select an attempt row in the timeline first", severity="warning")
            return
        if pin:
            self.rerun_with(pin=(row.stage, row.plugin))
        else:
            self.rerun_with(exclude=row.plugin)

    def exclude_selected_unit(self) -> None:
        candidate = self.main.query_one(EvidenceTable).selected
        if candidate is None:
            self.notify("select an evidence row first", severity="warning")
            return
        self.intervene(Intervention(kind="exclude_unit", target=candidate.id))

    def edit_intent(self) -> None:
        if self._refuse_in_replay("editing the intent"):
            return
        run = self.current
        if run is None or run.request is None:
            self.notify("type a question first", severity="warning")
            return
        state = run.final
        cnl = state.intent_cnl or INTENT_TEMPLATE.format(target=run.question.replace('"', "'"))

        def done(text: str | None) -> None:
            if text is not None:
                self.intervene(Intervention(kind="edit_intent", target=text))

        self.push_screen(IntentModal(cnl), callback=done)

    def show_diff(self) -> None:
        if len(self.runs) < 2:
            self.notify("only one run so far: to compare, ask another question or re-run with r "
                        "(pin p or exclude x a plugin first to see what changes)")
            return
        from mrptui.screens.diff import DiffScreen

        self.push_screen(DiffScreen(self.runs[-2], self.runs[-1]))
