"""Fill a DataTable with columns sized to their content right away.

DataTable measures auto-width columns later, on an Idle event; until then a fresh table draws with
header-wide columns. Sizing the columns ourselves makes every frame right (and snapshots stable).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import zip_longest
from typing import Any

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.cache import LRUCache
from textual.coordinate import Coordinate
from textual.css.styles import RenderStyles
from textual.geometry import Region
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import DataTable
from textual.widgets._data_table import ColumnKey, Row, RowKey

from mrptui.widgets.cell_strip import Cell, plain_cell_line
from mrptui.widgets.column_fit import content_widths, cut, cut_id, cut_text, fit_columns, plain_of
from mrptui.widgets.drawn_styles import DrawnStyles
from mrptui.widgets.id_cut import unique_cut
from mrptui.widgets.kept_component_styles import KeptComponentStyles
from mrptui.widgets.kept_lines import KeptLines
from mrptui.widgets.laid_out import ScrolledInPlace
from mrptui.widgets.quiet_scrollbars import QuietScrollbars


class NaturalWidth(Message):
    """A pane's content changed how wide it would be uncut; the screen may fit its pane split to it."""


def report_natural_width(widget: Widget, width: int) -> None:
    """Keep `width` (cells of content, uncut; 0: nothing to show) on the widget and tell the screen
    when it changed."""
    if getattr(widget, "natural_width", None) != width:
        widget.natural_width = width  # type: ignore[attr-defined]
        widget.post_message(NaturalWidth())


def rows_width(table: DataTable, rows: int) -> int:
    """The width `rows` rows (of height 1) will have to draw in: without the vertical scrollbar's
    cells once they overflow the table, shown yet or not. Fitted to the width before the bar
    showed, a question's timeline was one cell too wide once it did: a horizontal scrollbar, a
    refit, and two more layout passes of the whole screen while the run went on (issue 41)."""
    width = table.scrollable_content_region.width
    overflows = rows + (table.header_height if table.show_header else 0) > table.content_region.height
    if overflows and not table.show_vertical_scrollbar and table.styles.overflow_y == "auto":
        width -= table.styles.scrollbar_size_vertical
    return width


def refill(
    table: DataTable,
    columns: Sequence[tuple[str, str]],
    rows: Iterable[Sequence[object]],
    *,
    fixed: dict[str, int] | None = None,
    floors: dict[str, int] | None = None,
    middle: set[str] | None = None,
) -> None:
    """Replace the table's columns and rows; `fixed` pins some column widths (by key). With
    `floors` (key → narrowest width), the columns named there shrink, widest first, so the row
    fits the table's width (`fit_columns`); the others keep their content width. A cut cell ends
    in "…"; the `middle` columns hold ids, cut to the shortest form that keeps every id of the
    column distinct (`id_cut.unique_cut`)."""
    # Lists, so the fit below can cut their cells in place.
    cells = [list(row) for row in rows]
    widths = content_widths([label for _, label in columns], cells)
    # A pinned width is what the row takes, whatever its content: the fit below counts it so.
    widths = [(fixed or {}).get(key, width) for (key, _), width in zip(columns, widths)]
    # A table with no rows has nothing to show: it yields its width to its neighbours.
    report_natural_width(table, sum(w + 2 for w in widths) if cells else 0)
    if floors is not None and table.size.width:
        keys = [key for key, _ in columns]
        middle_ids = {
            index: [plain_of(row[index]) for row in cells] for index, key in enumerate(keys) if key in (middle or ())
        }

        room = rows_width(table, len(cells)) - 2 * len(columns)
        fit = fit_columns(keys, widths, room, floors, set(middle_ids), lambda i, w: unique_cut(middle_ids[i], w))
        for row in cells:
            for index, id_cut_of in fit.id_cuts.items():
                row[index] = cut_id(row[index], id_cut_of)
            for index in fit.cut:
                row[index] = cut(row[index], fit.widths[index])
        widths = fit.widths
    table.clear(columns=True)
    for (key, label), width in zip(columns, widths, strict=True):
        # A header narrower than its label is cropped silently too: it says where it was cut.
        table.add_column(cut_text(label, width) if cell_len(label) > width else label, key=key, width=width)
    table.add_rows(cells)


def _shown_as(cells: Iterable[object]) -> tuple | None:
    """What a row's cells show, as a key (None when a cell is not one `refill` makes: its look
    cannot be told from its value)."""
    shown: list[object] = []
    for cell in cells:
        if isinstance(cell, Text):
            shown.append(
                (Text, cell.plain, cell.style, tuple(cell.spans), cell.justify, cell.overflow, cell.no_wrap, cell.end)
            )
        elif isinstance(cell, Cell):
            shown.append((Cell, cell.plain, cell.style, cell.justify))
        elif type(cell) is str:
            shown.append(cell)
        else:
            return None
    return tuple(shown)


class FilledTable(ScrolledInPlace, KeptLines, KeptComponentStyles, QuietScrollbars, DataTable):
    """A DataTable that `refill` fills, kept cheap for panes repainted while the engine runs
    (issue 25: keypress → frame while a 100k question runs). Two of DataTable's costs do not
    apply to it (textual is pinned, so these private hooks are stable):

    - On idle, DataTable measures every cell of every new row for auto-width columns and auto-height
      rows (5,000 measures for a 500-row evidence table, ~10% of the UI thread's time). `refill`
      gives every column its width and every row height 1, so only the virtual size is computed.
    - On every style update, a focus move among them, DataTable drops its rendered cells, rows and
      lines. Those caches are keyed on the pseudo-classes (focus, hover), and the styles that
      depend on them (the cursor colour, the focused tint) are fixed for each state, so a
      focus move keeps them. They are dropped when the styles of a state differ from those the
      table last drew that state with (a theme change), checked where the table draws
      (`drawn_styles`)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._drawn_styles = DrawnStyles(DataTable.COMPONENT_CLASSES)
        # Kept across refills (DataTable's `clear` drops its own caches), dropped with the styles.
        self._header_cells: LRUCache[tuple, list[list[Segment]]] = LRUCache(256)
        self._kept_rows: LRUCache[tuple, tuple[list, list]] = LRUCache(256)
        self._styles_this_draw: dict[tuple[str, ...], object] | None = None

    def _update_dimensions(self, new_rows) -> None:
        sized = not any(column.auto_width for column in self.columns.values()) and not any(
            row.auto_height or row.label is not None for key in new_rows if (row := self.rows.get(key)) is not None
        )
        super()._update_dimensions(() if sized else new_rows)

    def add_rows(self, rows: Iterable[Iterable[object]]) -> list[RowKey]:
        """DataTable's add_rows adds one row at a time, each listing the columns twice, setting the
        cursor again and asking for an idle pass (a third of a 500-row refill). The same rows,
        cursor and highlight, in one pass (rows of height 1, no labels, as `refill` adds them)."""
        keys = [column.key for column in self.ordered_columns]
        start = self.row_count
        added = []
        for index, cells in enumerate(rows, start=start):
            cells = tuple(cells)
            if len(cells) > len(keys):
                raise ValueError("More values provided than there are columns.")
            key = RowKey()
            self._row_locations[key] = index
            self._data[key] = dict(zip_longest(keys, cells))
            self.rows[key] = Row(key, 1, None, False)
            added.append(key)
        if added:
            # The rows' size is known now (fixed widths, height 1): a cursor moved right after is
            # scrolled into view in this frame, not after it (DataTable waits for its idle pass,
            # and the table was drawn once scrolled to the top by `clear`, then again at the
            # cursor: a flash of the wrong rows, and the pane drawn twice).
            self._require_update_dimensions = False  # `clear` asked for the idle pass
            self._update_dimensions(added)
            self.cursor_coordinate = self.cursor_coordinate
            if start == 0 and keys and self.show_cursor and self.cursor_type != "none":
                self._highlight_cursor()  # the first row gives the cursor somewhere to be
            self._update_count += 1
            self.check_idle()
        return added

    def notify_style_update(self) -> None:
        # DataTable's own drops every cache: skip it (Widget's runs) and keep the keyed caches
        # until render_lines sees the styles this update brought (component styles are updated
        # after this call).
        super(DataTable, self).notify_style_update()
        self._styles_cache.clear()
        self._get_styles_to_render_cell.cache_clear()  # keyed on flags, not on the focus
        self._drawn_styles.expect_change()
        self.refresh()

    def _render_cell(
        self,
        row_index: int,
        column_index: int,
        base_style: Style,
        width: int,
        cursor: bool = False,
        hover: bool = False,
    ) -> list[list[Segment]]:
        """DataTable's, with a body cell of plain text drawn without Rich's per-cell rendering
        (`cell_strip`), cached under DataTable's own key."""
        row_key = self._row_locations.get_key(row_index)
        column_key = self._column_locations.get_key(column_index)
        fixed, padding, console = self._drawn(
            ("cell settings",),
            lambda: (bool(self.fixed_rows or self.fixed_columns), self.cell_padding, self.app.console),
        )
        flags = self._cursor_flags()
        if row_index == -1 and column_key is not None and not fixed:
            return self._header_cell(column_index, column_key, base_style, width, cursor, hover, flags)
        if row_key is None or column_key is None or fixed:  # labels
            return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        key = (
            row_key,
            column_key,
            base_style,
            cursor,
            hover,
            flags[1],  # DataTable's _show_hover_cursor
            self._update_count,
            self._pseudo_class_state,
        )
        lines = self._cell_render_cache.get(key)
        if lines is not None:
            return lines
        row = self.rows.get(row_key)
        datum = self._data[row_key].get(column_key) if row is not None and row.height == 1 else None
        component, post = self._get_styles_to_render_cell(False, False, False, hover, cursor, *flags)
        pre = base_style + Style.from_meta({"row": row_index, "column": column_index}) + component
        line = plain_cell_line(console, datum, width, padding, pre, post)
        if line is None:
            return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        self._cell_render_cache[key] = [line]
        return [line]

    def _header_cell(
        self,
        column_index: int,
        column_key: ColumnKey,
        base_style: Style,
        width: int,
        cursor: bool,
        hover: bool,
        flags: tuple[bool, bool, bool, bool],
    ) -> list[list[Segment]]:
        """A header cell as DataTable draws it (through Rich), kept under what it shows rather
        than under DataTable's update count: a refill (a new question) keeps the headers."""
        label = self.columns[column_key].label
        key = (
            column_index,
            label.plain,
            label.style,
            tuple(label.spans),
            label.justify,
            base_style,
            width,
            cursor,
            hover,
            flags,
            self.header_height,
            self._pseudo_class_state,
        )
        lines = self._header_cells.get(key)
        if lines is None:
            lines = self._header_cells[key] = super()._render_cell(-1, column_index, base_style, width, cursor, hover)
        return lines

    def _cursor_flags(self) -> tuple[bool, bool, bool, bool]:
        """The cursor settings DataTable reads (reactives) for every cell, read once a draw."""
        return self._drawn(
            ("cursor flags",),
            lambda: (
                self.show_cursor,
                self._show_hover_cursor,
                self.cursor_foreground_priority == "css",
                self.cursor_background_priority == "css",
            ),
        )

    def _render_line_in_row(
        self,
        row_key: RowKey,
        line_no: int,
        base_style: Style,
        cursor_location: Coordinate,
        hover_location: Coordinate,
    ) -> tuple[list, list]:
        """DataTable's, for a body row of the tables `refill` fills (a row cursor, no labels, no
        fixed rows or columns), cached under DataTable's key: DataTable also looks up the header's
        style, the background and each column's width for every line, and builds a coordinate
        for each cell to ask whether the cursor is on it."""
        if (
            row_key is self._header_row_key
            or self.cursor_type != "row"
            or self._labelled_row_exists
            or self.fixed_rows
            or self.fixed_columns
        ):
            return super()._render_line_in_row(row_key, line_no, base_style, cursor_location, hover_location)
        show_cursor, show_hover_cursor, _, _ = self._cursor_flags()
        cache_key = (
            row_key,
            line_no,
            base_style,
            cursor_location,
            hover_location,
            self.cursor_type,  # "row" here: DataTable's key, typed as its cursor type
            show_cursor,
            show_hover_cursor,
            self._update_count,
            self._pseudo_class_state,
        )
        found = self._row_render_cache.get(cache_key)
        if found is not None:
            return found
        row_index = self._row_locations.get(row_key)
        if row_index is None:
            row_index = -1
        widths = self._drawn(("widths",), lambda: [column.get_render_width(self) for column in self.ordered_columns])
        cursor = row_index == cursor_location.row
        hover = row_index == hover_location.row
        # DataTable's key names the row by its key and the table's update count, both new on every
        # refill: this one by what the row shows, so a refill keeps the lines of the rows it did
        # not change (a live question's timeline gains a row or two an event; issue 41).
        shown = _shown_as(self._data[row_key].values())
        kept_key = shown and (
            (row_index, shown, tuple(widths), self.size.width, line_no, base_style, cursor, hover)
            + (show_cursor, show_hover_cursor, self._pseudo_class_state)
        )
        pair = self._kept_rows.get(kept_key) if kept_key else None
        if pair is None:
            pair = self._draw_row(row_index, line_no, base_style, widths, cursor, hover)
            if kept_key:
                self._kept_rows[kept_key] = pair
        self._row_render_cache[cache_key] = pair
        return pair

    def _draw_row(
        self,
        row_index: int,
        line_no: int,
        base_style: Style,
        widths: list[int],
        cursor: bool,
        hover: bool,
    ) -> tuple[list, list]:
        row_style = self._drawn(("row style", str(row_index % 2)), lambda: self._get_row_style(row_index, base_style))
        scrollable = [
            self._render_cell(row_index, column_index, row_style, width, cursor, hover)[line_no]
            for column_index, width in enumerate(widths)
        ]
        # The fill right of the last column, styled as DataTable styles it for a row cursor.
        extend_style, _ = self._get_styles_to_render_cell(False, False, False, hover, cursor, *self._cursor_flags())
        extend_style = (
            row_style + extend_style + Style.from_meta({"row": row_index, "column": 0, "out_of_bounds": True})
        )
        scrollable.append([Segment(" " * max(0, self.size.width - sum(widths)), extend_style)])
        return [], scrollable

    def render_lines(self, crop: Region) -> list[Strip]:
        if self._drawn_styles.changed(self):
            self._clear_caches()
            self._header_cells.clear()
            self._kept_rows.clear()
        # Styles do not change within one draw, yet DataTable looks up three a line (its own and
        # the header's and row's component styles), each walking the DOM from the screen down:
        # a third of a line drawn (issue 41). They are looked up once a draw.
        self._styles_this_draw = {}
        try:
            return super().render_lines(crop)
        finally:
            self._styles_this_draw = None

    def _drawn(self, key: tuple[str, ...], look_up: Callable[[], object]) -> Any:
        kept = self._styles_this_draw
        if kept is None:
            return look_up()
        found = kept.get(key)
        if found is None:
            found = kept[key] = look_up()
        return found

    @property
    def rich_style(self) -> Style:
        return self._drawn((), lambda: super(FilledTable, self).rich_style)

    def get_component_styles(self, *names: str) -> RenderStyles:
        return self._drawn(names, lambda: super(FilledTable, self).get_component_styles(*names))


def component_style(widget, name: str) -> Style:
    """A component class's colour and text style as a Rich style, with translucent theme colours
    (such as $text-muted) blended onto the widget's background so they stay muted."""
    styles = widget.get_component_styles(name)
    color = styles.color
    if color.a < 1:
        color = widget.background_colors[1] + color
    text_style = styles.text_style
    return Style(color=color.rich_color, bold=text_style.bold or None, italic=text_style.italic or None)
