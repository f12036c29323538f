"""A VirtualTable drawn as Textual's DataTable draws a zebra-striped row-cursor table.

A DataTable keeps every row as widget data (a key, a dict of cells, a row record) and lays it out
when it is filled: the evidence pane's refill cost ~28 ms of the UI thread a question for 500 rows
of which ~20 are seen (issue 41). This table holds the rows as the caller made them (plain `Cell`s,
built once a refill) and draws only the lines on screen, each kept as a Strip until the rows, the
cursor, the hover or the styles change. Every line is the one DataTable draws for the same cells
(cell padding, header, zebra rows, cursor and hover styles, the mouse metadata a click reads).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from itertools import chain
from typing import ClassVar

from rich.cells import cell_len
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual._segment_tools import line_crop
from textual.binding import Binding, BindingType
from textual.geometry import Region
from textual.renderables.styled import Styled
from textual.strip import Strip

from mrptui.widgets.cell_strip import Cell, plain_cell_line
from mrptui.widgets.column_fit import cut
from mrptui.widgets.virtual_table import Cells, VirtualTable

PADDING = 1  # DataTable's cell padding, each side of a cell
_KEPT_LINES = 256
_HEADER = -1  # the header's row index, as DataTable's mouse metadata names it


class CellTable(VirtualTable):
    """Rows of `Cell`s under a header of labels, in columns of fixed content widths."""

    COMPONENT_CLASSES: ClassVar[set[str]] = VirtualTable.COMPONENT_CLASSES | {
        "virtual-table--odd-row",
        "virtual-table--hover",
        "virtual-table--header-hover",
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+home", "first", "Top", show=False),
        Binding("ctrl+end", "last", "Bottom", show=False),
    ]

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id, classes=classes)
        self.hover_row = 0
        self._show_hover = False  # DataTable's: the mouse moved over the table since the last key
        self._lines: OrderedDict[tuple, Strip] = OrderedDict()
        self._look: tuple[Style, ...] | None = None  # the styles of the draw under way

    def fill(self, columns: Sequence[tuple[str, int]], count: int, row_cells: Callable[[int], Cells]) -> None:
        self._lines.clear()
        super().fill(columns, count, row_cells)

    @property
    def drawn_columns(self) -> list[tuple[str, int]]:
        """Each column's header label and content width, as drawn."""
        return list(self._columns)

    def _content_width(self) -> int:
        return sum(width + 2 * PADDING for _, width in self._columns)

    # -- keys and mouse (DataTable's: a key hides the hover cursor, a move shows it) ----------

    def _key_move(self, row: int) -> None:
        self._set_hover(False)
        self.move_cursor(row)

    def action_cursor_up(self) -> None:
        self._key_move(self.cursor_row - 1)

    def action_cursor_down(self) -> None:
        self._key_move(self.cursor_row + 1)

    def _page_move(self, direction: int) -> None:
        """DataTable's page: the view and the cursor move by the rows on screen."""
        page = self._visible_rows() * direction
        self.scroll_to(y=self.scroll_offset.y + page, animate=False, immediate=True)
        self._key_move(self.cursor_row + page)

    def action_page_up(self) -> None:
        self._page_move(-1)

    def action_page_down(self) -> None:
        self._page_move(1)

    def action_first(self) -> None:
        self._key_move(0)

    def action_last(self) -> None:
        self._key_move(self._count - 1)

    def _set_hover(self, shown: bool, row: int | None = None) -> None:
        if shown == self._show_hover and row in (None, self.hover_row):
            return
        self._show_hover = shown
        if row is not None:
            self.hover_row = row
        self.refresh()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        row = event.style.meta.get("row")
        self._set_hover(row is not None, row)

    def on_leave(self, _: events.Leave) -> None:
        self._set_hover(False)

    def on_click(self, event: events.Click) -> None:
        event.prevent_default()  # VirtualTable's click reads the row from y: this one reads the cell
        meta = event.style.meta
        self._set_hover(True)
        if "row" not in meta or "column" not in meta:
            return
        row, column = meta["row"], meta["column"]
        if row == _HEADER:
            self.header_clicked(column)
            return
        if row == self.cursor_row:  # a click on the highlighted row selects it
            self.action_select()
        else:
            self.move_cursor(row)
        event.stop()

    def header_clicked(self, column: int) -> None:
        """A click on column `column`'s header cell."""

    # -- drawing ------------------------------------------------------------------------------

    def render_lines(self, crop: Region) -> list[Strip]:
        # Styles do not change within one draw: looked up once, not for every line.
        self._look = self._styles_now()
        try:
            return super().render_lines(crop)
        finally:
            self._look = None

    def _styles_now(self) -> tuple[Style, ...]:
        component = self.get_component_rich_style
        return (
            self.rich_style,
            self.get_component_styles("virtual-table--header").rich_style,
            self.get_component_styles("virtual-table--even-row").rich_style,
            self.get_component_styles("virtual-table--odd-row").rich_style,
            component("virtual-table--cursor"),
            component("virtual-table--hover"),
            component("virtual-table--header-hover"),
        )

    def _cell_styles(self, look: tuple[Style, ...], header: bool, hover: bool, cursor: bool) -> tuple[Style, Style]:
        """DataTable's `_get_styles_to_render_cell` for a row cursor shown, its foreground over the
        cell's own (the cursor's colour is the CSS's, its background the cell's)."""
        component = Style()
        if hover and self._show_hover:
            component += look[5]
            if header:
                component += look[6]
        if cursor:
            component += look[4]
        return component, Style.from_color(color=component.color) + Style.null()

    def render_line(self, y: int) -> Strip:
        look = self._look or self._styles_now()
        width = self.size.width
        row = _HEADER if y == 0 else int(self.scroll_offset.y) + y - 1
        if row >= self._count:
            return Strip.blank(width, look[0])
        scroll_x = int(self.scroll_offset.x)
        hover = self._show_hover and self.hover_row == row
        key = (row, row == self.cursor_row, hover, scroll_x, width, look)
        line = self._lines.get(key)
        if line is None:
            segments = self._header_segments(look) if row == _HEADER else self._row_segments(row, look)
            line = Strip(line_crop(segments, scroll_x, scroll_x + width, width))
            line = self._lines[key] = line.adjust_cell_length(width, look[0]).simplify()
            if len(self._lines) > _KEPT_LINES:
                self._lines.popitem(last=False)
        return line

    def _header_segments(self, look: tuple[Style, ...]) -> list[Segment]:
        hover = self.hover_row == _HEADER
        component, post = self._cell_styles(look, True, hover, False)
        console = self.app.console
        options = self.app.console_options.update_dimensions(0, 1).update(no_wrap=True)
        segments: list[Segment] = []
        for index, (label, width) in enumerate(self._columns):
            shown = cut(label, width) if cell_len(label) > width else Text.from_markup(label)
            styled = Styled(
                Padding(shown, (0, PADDING)),
                pre_style=look[1] + Style.from_meta({"row": _HEADER, "column": index}) + component,
                post_style=post,
            )
            segments += console.render_lines(styled, options.update_width(width + 2 * PADDING))[0]
        return segments + [self._fill(look[1], _HEADER, hover, False, look)]

    def _row_segments(self, row: int, look: tuple[Style, ...]) -> list[Segment]:
        row_style = look[3] if row % 2 else look[2]
        cursor, hover = row == self.cursor_row, row == self.hover_row
        component, post = self._cell_styles(look, False, hover, cursor)
        console = self.app.console
        lines = []
        for index, ((_, width), cell) in enumerate(zip(self._columns, self.cells(row))):
            pre = row_style + Style.from_meta({"row": row, "column": index}) + component
            drawn = plain_cell_line(console, cell, width + 2 * PADDING, PADDING, pre, post)
            if drawn is None:  # not plain enough (wide or control characters): Rich draws it
                shown = Padding(cell.__rich__() if isinstance(cell, Cell) else cell, (0, PADDING))
                options = self.app.console_options.update_dimensions(width + 2 * PADDING, 1).update(no_wrap=True)
                drawn = console.render_lines(Styled(shown, pre_style=pre, post_style=post), options)[0]
            lines.append(drawn)
        return [*chain.from_iterable(lines), self._fill(row_style, row, hover, cursor, look)]

    def _fill(self, row_style: Style, row: int, hover: bool, cursor: bool, look: tuple[Style, ...]) -> Segment:
        """The room right of the last column, styled as DataTable styles it for a row cursor."""
        component, _ = self._cell_styles(look, row == _HEADER, hover, cursor)
        style = row_style + component + Style.from_meta({"row": row, "column": 0, "out_of_bounds": True})
        return Segment(" " * max(0, self.size.width - self._content_width()), style)
