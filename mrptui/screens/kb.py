"""The KB screen: the caller's view (units in id order), validation errors, search, why-not, edit.

Its panes and how they render are `KBPanes` (kb_panes.py); here are reading the session, the search
and the keys."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual import on
from textual.binding import Binding, BindingType
from textual.widgets import Input
from textual.worker import get_current_worker

from core.kb.health import count_diagnostics
from core.units import KnowledgeUnit
from mrptui.clipboard import copy_text
from mrptui.messages import OpenInEditor, OpenUnit, ReloadKB
from mrptui.screens.kb_panes import KBPanes
from mrptui.screens.kb_search import INLINE_UNITS, search_all, search_chunks
from mrptui.screens.modals import UnitModal
from mrptui.screens.why_not import WhyNotModal
from mrptui.state import trace_unit_ids
from mrptui.widgets.virtual_table import VirtualTable


class KBScreen(KBPanes):
    """Units of the caller's permitted view, in id order, with every validation error."""

    HELP = """\
## KB
The units this caller may see (in id order, so by source), and every validation error of the KB and rule
files with its file:line. Saved files are reloaded automatically; a unit whose edit fails
validation is withdrawn for every caller until fixed, and the errors appear here.

The validation errors pane and `e` are author tools (**author view: whole KB**): they show every
file, restricted units included, whatever the caller. See docs/security.md.

- `s` (or ctrl+f) searches ids, topics, text and triples; `n` / `N` jump to the next / previous match;
  `f` shows only the matches.
- `w`: why is the selected unit not in the last answer? (visibility, each lane, each cut-off)
- `e`: open the selected unit's (or error's) whole file in your editor at its line (author view;
  `$VISUAL`/`$EDITOR`, or the `$MRPTUI_EDITOR` template, see docs/tui.md).
- `enter`: the unit's full text. `ctrl+r`: reload now. `escape`: back.
- `/`, or any key that is not one of these, goes to the question box (the screens above the
  main one close), so a question typed here is asked.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape,q", "app.pop_screen", "Back", id="kb.back", tooltip="Back to the screen this one was opened from"
        ),
        Binding("s,ctrl+f", "search", "Search", id="kb.search", tooltip="Search units (/ goes to the question box)"),
        Binding("n", "next_match", "Next", id="kb.next", tooltip="Next match"),
        Binding("N", "previous_match", "Prev", id="kb.previous", tooltip="Previous match"),
        Binding("f", "toggle_filter", "Filter", id="kb.filter", tooltip="Show only the matches (toggle)"),
        Binding("w", "why_not", "Why not?", id="kb.why_not", tooltip="Why is this unit not in the last answer?"),
        Binding(
            "e",
            "edit",
            "Edit",
            id="kb.edit",
            tooltip="Author view: whole KB. Open the whole file in your editor at this line",
        ),
        Binding("c", "copy", "Copy", id="kb.copy", tooltip="Copy the unit id or the error line"),
        Binding("ctrl+r", "reload", "Reload", id="kb.reload", tooltip="Re-read the KB and rule files now"),
        Binding("R,f3", "app.open('rules_screen')", "Rules", id="kb.rules", tooltip="The rules screen"),
    ]

    def on_mount(self) -> None:
        units = self.query_one("#kb-units", VirtualTable)
        self.query_one("#kb-search", Input).cursor_blink = self.explorer.cursor_blink
        self.watch(self.app, "kb_generation", lambda _: self.load(), init=False)
        self.load()
        units.focus()

    # -- data -------------------------------------------------------------------------------

    def load(self) -> None:
        """(Re-)read the caller's view and the diagnostics from the session."""
        app = self.explorer
        self.unit_search.units = app.kb.call("units", lambda session: session.units(app.caller), []) or []
        diagnostics = app.kb.call("diagnostics", lambda session: session.diagnostics(), []) or []
        run = app.current
        self.trace_ids = trace_unit_ids(run.final) if app.replay_without_kb and run else []
        self.diagnostics = sorted(diagnostics, key=lambda d: (d.file, d.line, d.col, d.code.value))
        self.counts = count_diagnostics(self.diagnostics)
        self._search()
        self._render_units()
        self._render_diagnostics()
        self._render_title()

    def _search(self) -> None:
        """Find the units matching the search's text: at once in a small view, else in a worker
        that adds hits as it goes (a newer search cancels it)."""
        self.workers.cancel_group(self, "kb-search")
        search = self.unit_search
        search.restart()
        units, text = search.units, search.text
        if text and len(units) > INLINE_UNITS:
            self.run_worker(
                lambda: self._search_worker(units, text), thread=True, group="kb-search", exit_on_error=False
            )
        elif text:
            for hits, done in search_chunks(units, text):
                search.add(hits, done)
            search.recompute()

    def _search_worker(self, units: Sequence[KnowledgeUnit], text: str) -> None:
        worker = get_current_worker()

        def heard(hits: list[int], done: int) -> bool:
            if worker.is_cancelled:
                return False
            self.app.call_from_thread(self._search_heard, units, text, hits, done)
            return True

        try:
            search_all(units, text, heard)
        except Exception as exc:  # noqa: BLE001 - a unit that cannot be read must not end the search silently
            self.app.call_from_thread(self.notify, f"search stopped: {type(exc).__name__}: {exc}", severity="error")

    def _search_heard(self, units: Sequence[KnowledgeUnit], text: str, hits: list[int], done: int) -> None:
        search = self.unit_search
        if units is not search.units or text != search.text:
            return  # an answer to a search that was replaced meanwhile
        first = not search.hits and bool(hits)
        search.add(hits, done)
        if hits or search.done:
            search.recompute()
            self._render_units()
        if first:
            self._jump(0)
        elif search.done and not search.hits:
            self._no_match()
        self._render_title()

    @on(VirtualTable.RowHighlighted, "#kb-units")
    def _highlighted(self, event: VirtualTable.RowHighlighted) -> None:
        self._render_detail()

    @on(VirtualTable.RowSelected, "#kb-units")
    def _selected(self, event: VirtualTable.RowSelected) -> None:
        if self.trace_ids and 0 <= event.cursor_row < len(self.trace_ids):
            self.post_message(OpenUnit(self.trace_ids[event.cursor_row][0]))
            return
        unit = self.selected
        if unit is not None:
            self.app.push_screen(UnitModal(unit, unit.id))

    # -- search -----------------------------------------------------------------------------

    def action_search(self) -> None:
        search = self.query_one("#kb-search", Input)
        search.add_class("-visible")
        search.value = self.unit_search.text
        search.focus()

    @on(Input.Submitted, "#kb-search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.set_search(event.value)
        event.input.remove_class("-visible")
        self.query_one("#kb-units", VirtualTable).focus()

    def on_key(self, event) -> None:
        search = self.query_one("#kb-search", Input)
        if event.key == "escape" and search.has_focus:
            event.stop()
            search.remove_class("-visible")
            self.query_one("#kb-units", VirtualTable).focus()

    def set_search(self, text: str) -> None:
        search = self.unit_search
        search.text, search.position = text.strip(), -1
        self._search()
        self._render_units()
        if search.matches:
            self._jump(0)
        elif search.text and search.done:
            self._no_match()
        self._render_title()

    def _no_match(self) -> None:
        # An author looking for a restricted or expired unit would otherwise read "no such unit";
        # saying the view is the caller's tells them where to look, and nothing about what is outside it.
        self.notify(
            f"no unit in this caller's view matches “{self.unit_search.text}”"
            " (units outside it, by Acl, Region or dates, are not listed; ctrl+g reads the KB as another caller)",
            severity="warning",
        )

    def _jump(self, to: int) -> None:
        self.query_one("#kb-units", VirtualTable).move_cursor(self.unit_search.step(to))
        self._render_title()

    def action_next_match(self) -> None:
        self._step(+1)

    def action_previous_match(self) -> None:
        self._step(-1)

    def _step(self, by: int) -> None:
        search = self.unit_search
        if not search.matches:
            self.notify("no search yet: press s to search" if not search.text else "no matches")
            return
        self._jump(search.position + by)

    def action_toggle_filter(self) -> None:
        search = self.unit_search
        if not search.text:
            self.notify("search first (/), then f shows only the matches")
            return
        search.filtered = not search.filtered
        search.recompute()
        self._render_units()
        if search.matches:
            self._jump(0)
        self._render_title()

    # -- why not, edit, copy, reload ----------------------------------------------------------

    def action_why_not(self) -> None:
        unit = self.selected
        app = self.explorer
        if app.replay_without_kb:
            self.notify("why-not needs the KB: replay with --kb PATH", severity="warning")
            return
        if unit is None:
            self.notify("select a unit first", severity="warning")
            return
        question = app.last_question
        if not question:
            self.notify("ask a question first: why-not explains a unit against the last question", severity="warning")
            return
        reasons = app.kb.call("why_not", lambda session: session.why_not(unit.id, question, app.caller), None)
        if reasons is None:
            return
        self.app.push_screen(WhyNotModal(unit.id, question, reasons))

    def action_edit(self) -> None:
        focused = self.focused
        if focused is not None and focused.id == "kb-diagnostics":
            diagnostic = self.selected_diagnostic
            if diagnostic is None:
                self.notify("no validation error selected", severity="warning")
                return
            self.post_message(OpenInEditor(diagnostic.file, diagnostic.line))
            return
        unit = self.selected
        if unit is None or unit.location is None:
            self.notify("this unit has no file location", severity="warning")
            return
        self.post_message(OpenInEditor(unit.location.file, unit.location.line))

    def action_copy(self) -> None:
        focused = self.focused
        if focused is not None and focused.id == "kb-diagnostics":
            diagnostic = self.selected_diagnostic
            text = diagnostic.format() if diagnostic else ""
        elif self.trace_ids:
            row = self.query_one("#kb-units", VirtualTable).cursor_row
            text = self.trace_ids[row][0] if 0 <= row < len(self.trace_ids) else ""
        else:
            unit = self.selected
            text = unit.id if unit else ""
        if not text:
            self.notify("nothing to copy here", severity="warning")
            return
        copy_text(self, text)

    def action_reload(self) -> None:
        self.post_message(ReloadKB())
