"""The KB screen: the caller's view (units by source), validation errors, search, why-not, edit."""

from __future__ import annotations

from typing import ClassVar, cast

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.markup import escape
from textual.screen import Screen
from textual.widgets import DataTable, Input, OptionList, Static
from textual.widgets.option_list import Option

from core.diagnostics import Diagnostic
from core.health import count_diagnostics, counts_phrase
from core.units import Caller, KnowledgeUnit
from mrptui.clipboard import copy_text
from mrptui.screens.modals import NO_KB_TEXT, TextModal, UnitModal, unit_markup
from mrptui.host import Explorer
from mrptui.messages import Command, OpenUnit
from mrptui.state import describe_caller, trace_unit_ids
from mrptui.widgets.keybar import KeyBar
from mrptui.widgets.tables import refill


UNIT_COLUMNS = [("id", "unit"), ("role", "role"), ("topic", "topic"), ("triple", "triple"), ("where", "file:line")]


# Panes that show every file, whatever the caller, say so on screen (docs/security.md).
AUTHOR_VIEW = "author view: whole KB"


def caller_label(caller: Caller) -> str:
    return describe_caller(caller.tags, caller.region, caller.as_of.isoformat())


def unit_matches(unit: KnowledgeUnit, needle: str) -> bool:
    needle = needle.lower()
    fields = [unit.id, unit.topic, unit.body, unit.role.value, unit.title or "", unit.subject or "",
              unit.relation.value if unit.relation else "", unit.object or ""]
    return any(needle in value.lower() for value in fields)


class KBScreen(Screen[None]):
    """Units of the caller's permitted view, grouped by source, with every validation error."""

    HELP = """\
## KB
The units this caller may see (grouped by source), and every validation error of the KB and rule
files with its file:line. Saved files are reloaded automatically; a unit whose edit fails
validation is withdrawn for every caller until fixed, and the errors appear here.

The validation errors pane and `e` are author tools (**author view: whole KB**): they show every
file, restricted units included, whatever the caller. See docs/security.md.

- `/` searches ids, topics, text and triples; `n` / `N` jump to the next / previous match;
  `f` shows only the matches.
- `w`: why is the selected unit not in the last answer? (visibility, each lane, each cut-off)
- `e`: open the selected unit's (or error's) whole file in your editor at its line (author view;
  `$VISUAL`/`$EDITOR`, or the `$MRPTUI_EDITOR` template, see docs/tui.md).
- `enter`: the unit's full text. `ctrl+r`: reload now. `escape`: back.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "app.pop_screen", "Back", id="kb.back", tooltip="Back to the screen this one was opened from"),
        Binding("slash", "search", "Search", id="kb.search", tooltip="Search units"),
        Binding("n", "next_match", "Next", id="kb.next", tooltip="Next match"),
        Binding("N", "previous_match", "Prev", id="kb.previous", tooltip="Previous match"),
        Binding("f", "toggle_filter", "Filter", id="kb.filter", tooltip="Show only the matches (toggle)"),
        Binding("w", "why_not", "Why not?", id="kb.why_not", tooltip="Why is this unit not in the last answer?"),
        Binding("e", "edit", "Edit", id="kb.edit",
                tooltip="Author view: whole KB. Open the whole file in your editor at this line"),
        Binding("c", "copy", "Copy", id="kb.copy", tooltip="Copy the unit id or the error line"),
        Binding("ctrl+r", "reload", "Reload", id="kb.reload", tooltip="Re-read the KB and rule files now"),
        Binding("R,f3", "app.rules_screen", "Rules", id="kb.rules", tooltip="The rules screen"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.units: list[KnowledgeUnit] = []
        self.shown: list[KnowledgeUnit] = []
        self.diagnostics: list[Diagnostic] = []
        self.search_text = ""
        self.matches: list[int] = []
        self.match_position = -1
        self.filtered = False
        self.counts = (0, 0)  # (errors, warnings) of `diagnostics`: the header and the pane both show it
        self.trace_ids: list[tuple[str, str]] = []  # replaying without a KB: (id, role) the trace names

    @property
    def explorer(self) -> Explorer:
        return cast(Explorer, self.app)

    def compose(self) -> ComposeResult:
        # The counts sit in their own cell at the right, so a narrow terminal cuts the title, never them.
        with Horizontal(id="kb-header", classes="screen-title"):
            yield Static("KB", id="kb-title")
            yield Static("", id="kb-counts")
        units = DataTable(id="kb-units", cursor_type="row", zebra_stripes=True)
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
        units = self.query_one("#kb-units", DataTable)
        self.query_one("#kb-search", Input).cursor_blink = self.explorer.cursor_blink
        self.watch(self.app, "kb_generation", lambda _: self.load(), init=False)
        self.load()
        units.focus()

    # -- data -------------------------------------------------------------------------------

    def load(self) -> None:
        """(Re-)read the caller's view and the diagnostics from the session."""
        app = self.explorer
        units = app.ask_session("units", app.caller, default=[]) or []
        diagnostics = app.ask_session("diagnostics", default=[]) or []
        self.units = sorted(units, key=lambda u: (u.source_id, u.id))
        run = app.current
        self.trace_ids = trace_unit_ids(run.final) if app.replay_without_kb and run else []
        self.diagnostics = sorted(diagnostics, key=lambda d: (d.file, d.line, d.col, d.code.value))
        self.counts = count_diagnostics(self.diagnostics)
        self._recompute_matches()
        self._render_units()
        self._render_diagnostics()
        self._render_title()

    def _recompute_matches(self) -> None:
        base = self.units
        if self.search_text and self.filtered:
            self.shown = [u for u in base if unit_matches(u, self.search_text)]
        else:
            self.shown = list(base)
        self.matches = [i for i, u in enumerate(self.shown) if self.search_text and unit_matches(u, self.search_text)]
        if self.match_position >= len(self.matches):
            self.match_position = len(self.matches) - 1

    def _render_title(self) -> None:
        app = self.explorer
        sources = len({u.source_id for u in self.units})
        parts = [f"KB {escape(app.kb_label)}".rstrip(), f"{len(self.units)} units in {sources} sources",
                 f"visible to the {escape(caller_label(app.caller))}"]
        if app.recorded_for:
            parts.append(f"trace recorded for the {escape(app.recorded_for)}")
        if app.replay_without_kb:
            parts = ["KB", f"no KB is open (replaying a saved trace): the {len(self.trace_ids)} unit ids it names"]
        if self.search_text:
            where = f"{self.match_position + 1} of {len(self.matches)}" if self.matches else "no matches"
            parts.append(f"search “{escape(self.search_text)}”: {where}" + (" (filtered)" if self.filtered else ""))
        self.query_one("#kb-title", Static).update(" · ".join(parts))
        errors, warnings = self.counts
        tone = "$error" if errors else "$warning" if warnings else "$success"
        self.query_one("#kb-counts", Static).update(f"[{tone}]{counts_phrase(errors, warnings)}[/]")

    def _render_units(self) -> None:
        table = self.query_one("#kb-units", DataTable)
        cursor = table.cursor_row
        rows = []
        previous_source = None
        for position, unit in enumerate(self.shown):
            triple = f"{unit.subject} {unit.relation.value} {unit.object}" if unit.relation else ""
            where = f"{unit.location.file}:{unit.location.line}" if unit.location else ""
            marker = "▸ " if position in self.matches else ""
            source_first = unit.source_id != previous_source
            previous_source = unit.source_id
            rows.append([
                Text(marker + unit.id, style="bold" if source_first else ""),
                unit.role.value, Text(unit.topic), Text(triple), Text(where, style="dim"),
            ])
        if self.trace_ids:
            rows = [[Text(unit_id), role, "", "", ""] for unit_id, role in self.trace_ids]
        refill(table, UNIT_COLUMNS, rows)
        if self.trace_ids:
            table.border_subtitle = f"{len(self.trace_ids)} unit ids from the trace"
        else:
            table.border_subtitle = (f"{len(self.shown)} of {len(self.units)}" if self.filtered
                                     else f"{len(self.units)} units")
        if table.row_count:
            table.move_cursor(row=min(cursor, table.row_count - 1), animate=False)
        self._render_detail()

    def _render_diagnostics(self) -> None:
        listing = self.query_one("#kb-diagnostics", OptionList)
        highlighted = listing.highlighted
        listing.clear_options()
        for diagnostic in self.diagnostics:
            tone = "$error" if diagnostic.is_error else "$warning"
            listing.add_option(Option(
                f"{escape(diagnostic.file)}:{diagnostic.line}:{diagnostic.col} [{tone}]{diagnostic.code.value}[/]\n"
                f"  {escape(diagnostic.message)}"
            ))
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
        table = self.query_one("#kb-units", DataTable)
        if not self.shown or not (0 <= table.cursor_row < len(self.shown)):
            return None
        return self.shown[table.cursor_row]

    @property
    def selected_diagnostic(self) -> Diagnostic | None:
        index = self.query_one("#kb-diagnostics", OptionList).highlighted
        if index is None or not (0 <= index < len(self.diagnostics)):
            return None
        return self.diagnostics[index]

    @on(DataTable.RowHighlighted, "#kb-units")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._render_detail()

    @on(DataTable.RowSelected, "#kb-units")
    def _selected(self, event: DataTable.RowSelected) -> None:
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
        search.value = self.search_text
        search.focus()

    @on(Input.Submitted, "#kb-search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.set_search(event.value)
        event.input.remove_class("-visible")
        self.query_one("#kb-units", DataTable).focus()

    def on_key(self, event) -> None:
        search = self.query_one("#kb-search", Input)
        if event.key == "escape" and search.has_focus:
            event.stop()
            search.remove_class("-visible")
            self.query_one("#kb-units", DataTable).focus()

    def set_search(self, text: str) -> None:
        self.search_text = text.strip()
        self.match_position = -1
        self._recompute_matches()
        self._render_units()
        if self.matches:
            self._jump(0)
        elif self.search_text:
            self.notify(f"no unit matches “{self.search_text}”", severity="warning")
        self._render_title()

    def _jump(self, position: int) -> None:
        self.match_position = position % len(self.matches)
        table = self.query_one("#kb-units", DataTable)
        table.move_cursor(row=self.matches[self.match_position], animate=False)
        self._render_title()

    def action_next_match(self) -> None:
        if not self.matches:
            self.notify("no search yet: press / to search" if not self.search_text else "no matches")
            return
        self._jump(self.match_position + 1)

    def action_previous_match(self) -> None:
        if not self.matches:
            self.notify("no search yet: press / to search" if not self.search_text else "no matches")
            return
        self._jump(self.match_position - 1)

    def action_toggle_filter(self) -> None:
        if not self.search_text:
            self.notify("search first (/), then f shows only the matches")
            return
        self.filtered = not self.filtered
        self._recompute_matches()
        self._render_units()
        if self.matches:
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
        reasons = app.ask_session("why_not", unit.id, question, app.caller)
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
            self.post_message(Command("open_in_editor", (diagnostic.file, diagnostic.line)))
            return
        unit = self.selected
        if unit is None or unit.location is None:
            self.notify("this unit has no file location", severity="warning")
            return
        self.post_message(Command("open_in_editor", (unit.location.file, unit.location.line)))

    def action_copy(self) -> None:
        focused = self.focused
        if focused is not None and focused.id == "kb-diagnostics":
            diagnostic = self.selected_diagnostic
            text = diagnostic.format() if diagnostic else ""
        elif self.trace_ids:
            row = self.query_one("#kb-units", DataTable).cursor_row
            text = self.trace_ids[row][0] if 0 <= row < len(self.trace_ids) else ""
        else:
            unit = self.selected
            text = unit.id if unit else ""
        if not text:
            self.notify("nothing to copy here", severity="warning")
            return
        copy_text(self, text)

    def action_reload(self) -> None:
        self.post_message(Command("reload"))
