"""A row-cursor table that renders only the rows on screen, for lists of any length.

A DataTable stores every row as widgets data up front: a 100k-unit KB took 20 s of the UI thread
to list, and a million would not finish. This table holds a row count and a function that makes
one row's cells on demand; only the visible rows (and a small cache) ever exist.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from mrptui.widgets.cell_strip import Cell
from mrptui.widgets.kept_component_styles import KeptComponentStyles
from mrptui.widgets.kept_lines import KeptLines
from mrptui.widgets.laid_out import ScrolledInPlace
from mrptui.widgets.quiet_scrollbars import QuietScrollbars

Cells = Sequence[Text | str | Cell]
_CACHED_ROWS = 512
_GAP = 2  # cells between columns
_PAD = 1  # cells before the first column


class VirtualTable(ScrolledInPlace, KeptLines, KeptComponentStyles, QuietScrollbars, ScrollView, can_focus=True):
    """Columns of fixed widths; rows made by `row_cells(index)` when they come into view."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "virtual-table--header",
        "virtual-table--cursor",
        "virtual-table--even-row",
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor_up", "Up", show=False),
        Binding("down", "cursor_down", "Down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home", "first", "First", show=False),
        Binding("end", "last", "Last", show=False),
        Binding("enter", "select", "Select", show=False),
    ]

    cursor_row: reactive[int] = reactive(0, always_update=True, init=False)

    class RowHighlighted(Message):
        def __init__(self, table: VirtualTable, cursor_row: int) -> None:
            super().__init__()
            self.table = table
            self.cursor_row = cursor_row

        @property
        def control(self) -> VirtualTable:
            return self.table

    class RowSelected(RowHighlighted):
        pass

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id, classes=classes)
        self._columns: list[tuple[str, int]] = []
        self._count = 0
        self._row_cells: Callable[[int], Cells] = lambda index: ()
        self._cache: OrderedDict[int, Cells] = OrderedDict()

    @property
    def row_count(self) -> int:
        return self._count

    def fill(self, columns: Sequence[tuple[str, int]], count: int, row_cells: Callable[[int], Cells]) -> None:
        """Replace the rows: `columns` are (label, width) pairs, `row_cells(i)` makes row i."""
        self._columns = list(columns)
        self._count = count
        self._row_cells = row_cells
        self._cache.clear()
        self.virtual_size = Size(self._content_width(), count + 1)  # + the header line
        self.move_cursor(min(self.cursor_row, max(count - 1, 0)))
        self.refresh()

    def _content_width(self) -> int:
        return _PAD + sum(w for _, w in self._columns) + _GAP * max(len(self._columns) - 1, 0)

    def cells(self, index: int) -> Cells:
        found = self._cache.get(index)
        if found is None:
            found = self._cache[index] = self._row_cells(index)
            if len(self._cache) > _CACHED_ROWS:
                self._cache.popitem(last=False)
        return found

    # -- cursor -------------------------------------------------------------------------------

    def move_cursor(self, row: int) -> None:
        self.cursor_row = max(0, min(row, self._count - 1)) if self._count else 0

    def watch_cursor_row(self, row: int) -> None:
        self._scroll_to_row(row)
        self.refresh()
        if self._count:
            self.post_message(self.RowHighlighted(self, row))

    def _scroll_to_row(self, row: int) -> None:
        visible = self._visible_rows()
        top = int(self.scroll_offset.y)
        if row < top:
            self.scroll_to(y=row, animate=False, immediate=True)
        elif row >= top + visible:
            self.scroll_to(y=row - visible + 1, animate=False, immediate=True)

    def _visible_rows(self) -> int:
        """Rows on screen below the header (a horizontal scrollbar takes a line of its own)."""
        return max(self.scrollable_content_region.height - 1, 1)

    def _page(self) -> int:
        return max(self._visible_rows() - 1, 1)

    def action_cursor_up(self) -> None:
        self.move_cursor(self.cursor_row - 1)

    def action_cursor_down(self) -> None:
        self.move_cursor(self.cursor_row + 1)

    def action_page_up(self) -> None:
        self.move_cursor(self.cursor_row - self._page())

    def action_page_down(self) -> None:
        self.move_cursor(self.cursor_row + self._page())

    def action_first(self) -> None:
        self.move_cursor(0)

    def action_last(self) -> None:
        self.move_cursor(self._count - 1)

    def action_select(self) -> None:
        if self._count:
            self.post_message(self.RowSelected(self, self.cursor_row))

    def on_click(self, event: events.Click) -> None:
        if event.y >= 1:
            row = int(self.scroll_offset.y) + event.y - 1
            if row < self._count:
                self.move_cursor(row)
                if event.chain > 1:
                    self.action_select()

    # -- rendering ----------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        scroll_x = int(self.scroll_offset.x)
        if y == 0:
            style = self.get_component_rich_style("virtual-table--header")
            cells: Cells = [label for label, _ in self._columns]
        else:
            row = int(self.scroll_offset.y) + y - 1
            if row >= self._count:
                return Strip.blank(width, self.rich_style)
            style = self.rich_style
            if row % 2:
                style += self.get_component_rich_style("virtual-table--even-row")
            if row == self.cursor_row:
                style += self.get_component_rich_style("virtual-table--cursor")
            cells = self.cells(row)
        line = self._line(cells, style)
        return line.crop(scroll_x, scroll_x + width).extend_cell_length(width, style)

    def _line(self, cells: Cells, style: Style) -> Strip:
        segments = [Segment(" " * _PAD, style)]
        for position, ((_, width), cell) in enumerate(zip(self._columns, cells)):
            text = cell if isinstance(cell, Text) else Text(str(cell))
            text = text.copy()
            text.truncate(width, overflow="ellipsis", pad=True)
            if position:
                segments.append(Segment(" " * _GAP, style))
            segments.extend(
                Segment(s.text, style + s.style if s.style else style) for s in text.render(self.app.console, end="")
            )
        return Strip(segments)
