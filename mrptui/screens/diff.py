"""Two runs side by side, one row per compared fact, so both sides stay level whatever wraps.

The rows come from `core.kernel.rundiff`; this screen only draws them. Each row is one widget holding
both cells, so a cell that wraps makes the whole row taller and the next row starts below both
sides. Colours come from component classes in app.tcss (`diff-row--changed`, `--added`,
`--removed`, `--empty`, the marks, the changed words), toggled views from `-changes-only`.
"""

from __future__ import annotations

from typing import ClassVar

from rich.padding import Padding
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.geometry import Size
from textual.reactive import reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static

from core.kernel.rundiff import MARKS, SECTIONS, DiffRow, RunDiff, diff_runs
from mrptui.state import RunRecord
from mrptui.widgets.keybar import KeyBar

TONES = ("same", "changed", "added", "removed", "empty")
LEGEND = (("same", "unchanged"), ("changed", "changed"), ("added", "only right (new)"), ("removed", "only left (gone)"))


class DiffRows(VerticalScroll):
    """The scrolling list of rows; it holds the row colours, so each style is resolved once here
    rather than once per row (a component class costs a style pass per widget)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        *(f"diff-row--{tone}" for tone in TONES),
        *(f"diff-row--mark-{change}" for change in MARKS),
        "diff-row--note",
        "diff-row--word",
    }


class DiffRowView(Widget):
    """Both cells of one compared fact and the mark between them, drawn as one widget: a cell that
    wraps makes the row taller, and its shorter neighbour's colour fills the same height."""

    def __init__(self, row: DiffRow) -> None:
        super().__init__(classes=f"diff-row -{'changed' if row.changed else 'same'}")
        self.row = row
        self._heights: dict[int, int] = {}  # width → height: layout asks several times per width

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if width not in self._heights:
            self._heights[width] = super().get_content_height(container, viewport, width)
        return self._heights[width]

    def _style(self, name: str, *, partial: bool = False) -> Style:
        rows = self.parent
        assert isinstance(rows, DiffRows)
        return rows.get_component_rich_style(name, partial=partial)

    def _body(self, text: str, words: tuple[tuple[int, int], ...], note: str = "") -> Padding:
        body = Text(text)
        word_style = self._style("diff-row--word")
        for start, end in words:
            body.stylize(word_style, start, end)
        if note:
            body.append("\n" + note, self._style("diff-row--note", partial=True))
        return Padding(body, (0, 1))

    def render(self) -> Table:
        # Each row is its own one-row grid, so a column's style is one cell's colour; Rich fills a
        # shorter cell's extra lines with it, which keeps both sides coloured to the row's height.
        row = self.row
        tone = self._style
        grid = Table.grid(expand=True)
        grid.add_column(ratio=1, style=tone(f"diff-row--{row.side('left')}"))
        grid.add_column(width=3, justify="center", style=tone(f"diff-row--mark-{row.change}"))
        grid.add_column(ratio=1, style=tone(f"diff-row--{row.side('right')}"))
        grid.add_row(
            self._body(row.left, row.left_words), MARKS[row.change], self._body(row.right, row.right_words, row.note)
        )
        return grid


class DiffScreen(Screen[None]):
    """The previous run on the left, the latest on the right, in one scrolling list of rows."""

    HELP = """\
## Run diff
The previous run (left) and the latest run (right), fact by fact: the request (question, caller,
pins, exclusions), the plan, every attempt (skipped and not-reached ones, backtracks and your
interventions included), the kept evidence with rank and score moves, and the answer. Each fact
is one row, so both sides stay level however long a line is.

Colours and marks: `~` changed, `+` only in the right run (new), `-` only in the left run (gone),
`±` a different fact at the same place; plain rows are the same in both runs.

- `f`: show only the rows that changed (toggle).
- `n` / `N`: scroll to the next / previous changed row.
- `c`: copy the diff as text. `escape`: back.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "app.pop_screen", "Back", id="diff.back", tooltip="Back to the explorer"),
        Binding(
            "f",
            "toggle_changes_only",
            "Changed",
            id="diff.changes_only",
            tooltip="Show only the rows that differ (toggle)",
        ),
        Binding("n", "next_change", "Next", id="diff.next", tooltip="Scroll to the next changed row"),
        Binding("N", "previous_change", "Prev", id="diff.previous", tooltip="Scroll to the previous changed row"),
        Binding("c", "copy", "Copy", id="diff.copy", tooltip="Copy the diff as text"),
    ]

    changes_only: reactive[bool] = reactive(False)

    def __init__(self, left: RunRecord, right: RunRecord) -> None:
        super().__init__()
        self.left = left
        self.right = right
        self.diff: RunDiff = diff_runs(
            left.events, right.events, unfinished=(left.stopped or "running", right.stopped or "running")
        )
        self._at = -1  # the changed row `n` / `N` last went to

    @property
    def changes(self) -> int:
        return self.diff.changes

    @property
    def plain(self) -> str:
        return self.diff.plain()

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="diff-title", classes="screen-title")
        with Horizontal(id="diff-heads"):
            yield Static(f"run {self.left.run_id} (previous)", classes="diff-head")
            yield Static("", classes="diff-head-gap")
            yield Static(f"run {self.right.run_id} (latest)", classes="diff-head")
        with DiffRows(id="diff-rows"):
            for name in SECTIONS:
                rows = self.diff.section(name)
                changed = sum(row.changed for row in rows)
                head = f"{name} · {changed} changed" if changed else f"{name} · no change"
                yield Static(head, classes=f"diff-section -{'changed' if changed else 'same'}")
                for row in rows:
                    yield DiffRowView(row)
        with Horizontal(id="diff-legend"):
            for tone, words in LEGEND:
                yield Static(f"{MARKS[tone]} {words}", classes=f"diff-key -{tone}")
        yield KeyBar()

    def _title(self) -> str:
        summary = "identical" if not self.changes else f"{self.changes} of {len(self.diff.rows)} rows differ"
        only = " · changed rows only" if self.changes_only else ""
        return f"Diff · run {self.left.run_id} vs run {self.right.run_id} · {summary}{only}"

    def on_mount(self) -> None:
        self.query_one("#diff-rows").focus()

    def watch_changes_only(self, only: bool) -> None:
        if not self.is_mounted:
            return
        self.query_one("#diff-rows").set_class(only, "-changes-only")
        self.query_one("#diff-title", Static).update(self._title())
        self.call_after_refresh(self._keep_place)

    def _keep_place(self) -> None:
        """After rows were hidden or shown: back to the change `n` / `N` went to, else the top."""
        scroller = self.query_one("#diff-rows", VerticalScroll)
        current = [view for view in self.query(DiffRowView) if view.has_class("-current")]
        if current:
            scroller.scroll_to_widget(current[0], top=True, animate=False)
        else:
            scroller.scroll_home(animate=False)

    def action_toggle_changes_only(self) -> None:
        self.changes_only = not self.changes_only

    def _step_change(self, step: int) -> None:
        changed = [view for view in self.query(DiffRowView) if view.row.changed]
        if not changed:
            self.notify("the two runs are the same")
            return
        self._at = (self._at + step) % len(changed) if self._at >= 0 else (0 if step > 0 else len(changed) - 1)
        self.query_one("#diff-rows", VerticalScroll).scroll_to_widget(changed[self._at], top=True, animate=False)
        for view in changed:
            view.set_class(view is changed[self._at], "-current")

    def action_next_change(self) -> None:
        self._step_change(1)

    def action_previous_change(self) -> None:
        self._step_change(-1)

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(self.plain)
        self.notify("copied the diff")
