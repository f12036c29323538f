"""The KB screen's panes: the header (title and counts), the units table, the selected unit and
the validation errors, rendered from the screen's state (`KBScreen` in kb.py reads the session
and handles the keys).

The unit list renders only the rows on screen (`VirtualTable`), and a unit is restored only when its
row is drawn or selected, so a million-unit view opens as fast as a small one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.markup import escape
from textual.screen import Screen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from core.infra.diagnostics import Diagnostic
from core.kb.health import counts_phrase
from core.units import Caller, KnowledgeUnit
from mrptui.explorer import Explorer
from mrptui.screens.kb_columns import (
    MARK,
    UNIT_COLUMNS,
    UNIT_FLOORS,
    ContentWidths,
    content_widths,
    fit_unit_columns,
    unit_cells,
)
from mrptui.screens.kb_search import INLINE_UNITS, UnitSearch
from mrptui.screens.modals import NO_KB_TEXT, unit_rows
from mrptui.session_seam import describe_caller
from mrptui.widgets.field_grid import FieldGrid, grid_width
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


class KBPanes(Screen[None]):
    """The KB screen's state (the caller's view, its search, the diagnostics) and its panes."""

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
                yield FieldGrid(id="kb-detail-fields")
            diagnostics = OptionList(id="kb-diagnostics")
            diagnostics.border_title = "Validation errors"
            diagnostics.border_subtitle = f"{AUTHOR_VIEW} (this pane, e)"
            yield diagnostics
        yield Input(placeholder="search units (enter: find · escape: cancel)", id="kb-search")
        yield KeyBar()

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
            detail = max((grid_width(unit_rows(shown[p])) for p in read), default=0)
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
        """The selected unit's fields in two columns (a wrapped value stays under its first line),
        or one line saying why there is none."""
        unit = None if self.trace_ids else self.selected
        note, fields = self.query_one("#kb-detail-text", Static), self.query_one("#kb-detail-fields", FieldGrid)
        if unit is not None:
            fields.show(unit_rows(unit))
        else:
            note.update(
                f"[$warning]{escape(NO_KB_TEXT)}[/]" if self.trace_ids else "[$foreground-muted]no unit selected[/]"
            )
        note.display, fields.display = unit is None, unit is not None

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
