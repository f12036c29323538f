"""The KB screen: the caller's view (units in id order), validation errors, search, why-not, edit.

The unit list renders only the rows on screen (`VirtualTable`), and a unit is restored only when its
row is drawn or selected, so a million-unit view opens as fast as a small one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, cast

from rich.cells import cell_len
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.markup import escape
from textual.screen import Screen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from core.infra.diagnostics import Diagnostic
from core.kb.health import count_diagnostics, counts_phrase
from core.units import Caller, KnowledgeUnit
from mrptui.clipboard import copy_text
from mrptui.explorer import Explorer
from mrptui.messages import OpenInEditor, OpenUnit, ReloadKB
from mrptui.screens.kb_columns import (
    MARK,
    UNIT_COLUMNS,
    UNIT_FLOORS,
    ContentWidths,
    content_widths,
    fit_unit_columns,
    unit_cells,
)
from mrptui.screens.kb_search import INLINE_UNITS, UnitSearch, search_all, search_chunks
from mrptui.screens.modals import NO_KB_TEXT, TextModal, UnitModal, unit_markup
from mrptui.session_seam import describe_caller
from mrptui.state import trace_unit_ids
from mrptui.widgets.id_cut import unique_cut
from mrptui.widgets.keybar import KeyBar
from mrptui.widgets.virtual_table import Cells, VirtualTable

ERRORS_MIN = 24
# Units whose whole detail is rendered to size the selected-unit pane (~1.5 ms each under load).
DETAIL_READS = 100


# Panes that show every file, whatever the caller, say so on screen (docs/security.md).
AUTHOR_VIEW = "author view: whole KB"


def caller_label(caller: Caller) -> str:
    return describe_caller(caller.tags, caller.region, caller.as_of.isoformat())


def _widest(markup: str) -> int:
    return max((cell_len(line) for line in Content.from_markup(markup).plain.splitlines()), default=0)


def _diagnostic_markup(diagnostic: Diagnostic, between: str) -> str:
    tone = "$error" if diagnostic.is_error else "$warning"
    return (
        f"{escape(diagnostic.file)}:{diagnostic.line}:{diagnostic.col} [{tone}]{diagnostic.code.value}[/]"
        f"{between}{escape(diagnostic.message)}"
    )


class KBScreen(Screen[None]):
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

    def __init__(self) -> None:
        super().__init__()
        self.unit_search = UnitSearch()
        self.diagnostics: list[Diagnostic] = []
        self.counts = (0, 0)  # (errors, warnings) of `diagnostics`: the header and the pane both show it
        self.trace_ids: list[tuple[str, str]] = []  # replaying without a KB: (id, role) the trace names
        self._widths: tuple[Sequence[KnowledgeUnit], bool, ContentWidths, int] | None = None

    @property
    def explorer(self) -> Explorer:
        return cast(Explorer, self.app)

    @property
    def units(self) -> Sequence[KnowledgeUnit]:
        """The caller's view, in id order."""
        return self.unit_search.units

    def compose(self) -> ComposeResult:
        # The counts sit in their own cell at the right, so a narrow terminal cuts the title, never them.
        with Horizontal(id="kb-header", classes="screen-title"):
            yield Static("KB", id="kb-title")
            yield Static("", id="kb-counts")
        units = VirtualTable(id="kb-units")
        units.border_title = "Units"
        yield units
        with Horizontal(id="kb-bottom"):
            with VerticalScroll(id="kb-detail", can_focus=False) as detail:
                detail.border_title = "Selected unit"
                yield Static("", id="kb-detail-text")
            diagnostics = OptionList(id="kb-diagnostics")
            diagnostics.border_title = "Validation errors"
            diagnostics.border_subtitle = f"{AUTHOR_VIEW} (this pane, e)"
            yield diagnostics
        yield Input(placeholder="search units (enter: find · escape: cancel)", id="kb-search")
        yield KeyBar()

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

    def _render_title(self) -> None:
        app = self.explorer
        # Counting sources reads every unit: a large view shows its size alone.
        size = f"{len(self.units):,} units"
        if len(self.units) <= INLINE_UNITS:
            sources = len({u.source_id for u in self.units})
            size += f" in {sources} source{'' if sources == 1 else 's'}"
        parts = [f"KB {escape(app.kb_label)}".rstrip(), size, f"visible to the {escape(caller_label(app.caller))}"]
        if app.recorded_for:
            parts.append(f"trace recorded for the {escape(app.recorded_for)}")
        if app.replay_without_kb:
            parts = ["KB", f"no KB is open (replaying a saved trace): the {len(self.trace_ids)} unit ids it names"]
        if self.unit_search.text:
            parts.append(f"search “{escape(self.unit_search.text)}”: {self.unit_search.summary()}")
        self.query_one("#kb-title", Static).update(" · ".join(parts))
        # The caller's counts, as the status line shows them: the pane below is the author's.
        health = app.kb.health
        errors, warnings = (health.errors, health.warnings) if health is not None else self.counts
        tone = "$error" if errors else "$warning" if warnings else "$success"
        self.query_one("#kb-counts", Static).update(f"[{tone}]{counts_phrase(errors, warnings)}[/]")

    def _render_units(self) -> None:
        table = self.query_one("#kb-units", VirtualTable)
        if self.trace_ids:
            widths = [
                max(max((len(unit_id) for unit_id, _ in self.trace_ids), default=0), len("unit")),
                max(max((len(role) for _, role in self.trace_ids), default=0), len("role")),
                *(len(label) for label, _ in UNIT_COLUMNS[2:]),
            ]
            rows: list[Cells] = [[Text(unit_id), Text(role), "", "", ""] for unit_id, role in self.trace_ids]
            table.fill(self._columns(widths), len(rows), lambda i: rows[i])
            table.border_subtitle = f"{len(self.trace_ids)} unit ids from the trace"
        else:
            shown, marked = self.unit_search.shown, set(self.unit_search.matches)
            content, detail = self._content_widths(shown, bool(marked))
            # Ids give way in their middle, to a form no other id of the view shares (id_cut.py):
            # the unit column's floor is where that form fits, so the others give way to it.
            mark = len(MARK) if marked else 0
            unit_floor = unique_cut(content.ids, UNIT_FLOORS["unit"] - mark).width + mark
            columns = self._columns(list(content.widths), unit_floor)
            id_cut = unique_cut(content.ids, columns[0][1] - mark)
            columns[0] = (columns[0][0], max(columns[0][1], id_cut.width + mark))

            def cells(position: int) -> list[Text]:
                unit = shown[position]
                source_first = position == 0 or shown[position - 1].source_id != unit.source_id
                return unit_cells(unit, position in marked, source_first, id_cut, columns[4][1])

            table.fill(columns, len(shown), cells)
            self._split_bottom(detail)
            subtitle = f"{len(shown)} of {len(self.units)}" if self.unit_search.filtered else f"{len(self.units)} units"
            if len(content.read) < len(shown):
                subtitle += f" · topic, triple widths from {len(content.read):,} read"
            table.border_subtitle = subtitle
        self._render_detail()

    def _content_widths(self, shown: Sequence[KnowledgeUnit], marked: bool) -> tuple[ContentWidths, int]:
        """The columns' content widths and the widest detail of DETAIL_READS of the units read
        for them, kept while the rows stay the same: a resize or a search's progress re-renders,
        and reading the units again each time stalled the search (~1.5 ms a detail under load).
        The bottom split follows those details, not the one selected: it stays put while the
        cursor moves."""
        if self._widths is None or self._widths[0] is not shown or self._widths[1] != marked:
            content = content_widths(shown, marked=marked)
            read = content.read[:: max(-(-len(content.read) // DETAIL_READS), 1)]
            detail = max((_widest(unit_markup(shown[p], "")) for p in read), default=0)
            self._widths = (shown, marked, content, detail)
        return self._widths[2], self._widths[3]

    def _columns(self, widths: list[int], unit_floor: int | None = None) -> list[tuple[str, int]]:
        room = self.query_one("#kb-units", VirtualTable).scrollable_content_region.width - 1 - 2 * (len(widths) - 1)
        return fit_unit_columns(widths, room, unit_floor)

    def _split_bottom(self, detail_width: int) -> None:
        """The selected unit and the validation errors share the width as their widest lines do
        (each with its frame), so neither keeps a wide empty band."""
        detail, listing = self.query_one("#kb-detail"), self.query_one("#kb-diagnostics", OptionList)
        # With no errors the pane still keeps room for its title ("Validation: no errors").
        errors = max((_widest(_diagnostic_markup(d, "  ")) for d in self.diagnostics), default=ERRORS_MIN)
        # Neither asks for more than half the screen: in a narrow one they split evenly.
        half = max(self.size.width // 2, 1)
        detail.styles.width = f"{min(max(detail_width, 1) + detail.styles.gutter.width, half)}fr"
        listing.styles.width = f"{min(errors + listing.styles.gutter.width + 1, half)}fr"

    def on_resize(self) -> None:
        self.call_after_refresh(self._render_units)
        self.call_after_refresh(self._render_diagnostics)

    def _render_diagnostics(self) -> None:
        listing = self.query_one("#kb-diagnostics", OptionList)
        highlighted = listing.highlighted
        listing.clear_options()
        room = listing.scrollable_content_region.width
        for diagnostic in self.diagnostics:
            # Code and message on one line where the pane has room, else the message below.
            one_line = _diagnostic_markup(diagnostic, "  ")
            listing.add_option(
                Option(one_line if _widest(one_line) <= room else _diagnostic_markup(diagnostic, "\n  "))
            )
        if self.diagnostics:
            listing.highlighted = min(highlighted or 0, len(self.diagnostics) - 1)
        listing.border_title = f"Validation: {counts_phrase(*self.counts)}"

    def _render_detail(self) -> None:
        unit = self.selected
        if self.trace_ids:
            text = f"[$warning]{escape(NO_KB_TEXT)}[/]"
        else:
            text = unit_markup(unit, "") if unit else "[$foreground-muted]no unit selected[/]"
        self.query_one("#kb-detail-text", Static).update(text)

    @property
    def selected(self) -> KnowledgeUnit | None:
        table, shown = self.query_one("#kb-units", VirtualTable), self.unit_search.shown
        if not shown or not (0 <= table.cursor_row < len(shown)):
            return None
        return shown[table.cursor_row]

    @property
    def selected_diagnostic(self) -> Diagnostic | None:
        index = self.query_one("#kb-diagnostics", OptionList).highlighted
        if index is None or not (0 <= index < len(self.diagnostics)):
            return None
        return self.diagnostics[index]

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
            " (units outside it, by Acl, Region or dates, are not listed)",
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
        width = max((len(k) for k in reasons), default=0)
        lines = [f"[$foreground-muted]question: “{escape(question)}”[/]", ""]
        lines += [f"[b]{escape(lane.ljust(width))}[/b]  {escape(reason)}" for lane, reason in reasons.items()]
        if not reasons:
            lines.append("[$foreground-muted]the session gave no reasons[/]")
        plain = "\n".join([f"why not {unit.id}? ({question})"] + [f"{k}: {v}" for k, v in reasons.items()])
        self.app.push_screen(TextModal(f"Why not {unit.id}?", "\n".join(lines), plain=plain))

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
