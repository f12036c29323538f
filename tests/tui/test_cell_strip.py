"""FilledTable draws plain cells without Rich's per-cell rendering (issue 41): every cell it draws
so must come out as DataTable's own Rich rendering draws it, cursor, hover and zebra rows included."""

from __future__ import annotations

from itertools import product

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.app import App, ComposeResult
from textual.coordinate import Coordinate
from textual.strip import Strip
from textual.widgets import DataTable

from mrptui.widgets.cell_strip import Cell, plain_cell_line
from mrptui.widgets.column_fit import cut
from mrptui.widgets.tables import FilledTable, refill

# The last two carry meta or a link of their own, merged before the cell's meta (Rich's order).
STYLES = (
    "",
    "bold",
    Style(color="red", italic=True),
    Style(bgcolor="blue"),
    "dim underline",
    Style(bold=True, meta={"@click": "open", "row": -1}),
    Style(link="https://example.com"),
)
TEXTS = ("", "x", "kb-fast", "0.731", "×1.5", "数据管道", "a much longer cell than its column")


class _Tables(App):
    def compose(self) -> ComposeResult:
        yield FilledTable(id="table", cursor_type="row", zebra_stripes=True)


def _rows() -> list[list[object]]:
    rows = []
    for index, (text, style, justify) in enumerate(product(TEXTS, STYLES, (None, "left", "right"))):
        spanned = Text.assemble(Text(" "), Text(text, style=style))  # the timeline's mark and symbol
        over = Text.assemble((text, style), ("!", "dim"), style="italic")  # spans over a style of its own
        rows.append(
            [
                Cell(text, style, justify),
                Text(text, style=style),
                Text.from_markup(f"[b]{text}[/b]"),
                spanned,
                over,
                index,
            ]
        )
    return rows


def _drawn(lines: list[list[Segment]]) -> list[Segment]:
    return list(Strip(lines[0]).simplify())


async def test_plain_cells_are_drawn_as_rich_draws_them() -> None:
    app = _Tables()
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.query_one(FilledTable)
        rows = _rows()
        refill(
            table,
            [("a", "a"), ("b", "b"), ("c", "c"), ("s", "s"), ("o", "o"), ("n", "n")],
            rows,
            fixed={"a": 12, "b": 12},
        )
        await pilot.pause()
        table._pseudo_class_state = table.get_pseudo_class_state()
        drawn_here = 0
        for row, column, cursor, hover in product(range(len(rows)), range(6), (False, True), (False, True)):
            base = table._get_row_style(row, table.rich_style)
            ours = _drawn(table._render_cell(row, column, base, 12, cursor, hover))
            table._cell_render_cache.clear()
            theirs = _drawn(DataTable._render_cell(table, row, column, base, 12, cursor, hover))
            table._cell_render_cache.clear()
            assert ours == theirs, (rows[row][column], cursor, hover)
            drawn_here += plain_cell_line(app.console, rows[row][column], 12, 1, base, base) is not None
        assert drawn_here > len(rows) * 4  # most Cell and plain Text cells were drawn here, not by Rich


def test_only_plain_one_line_cells_that_fit_are_drawn_here() -> None:
    from rich.console import Console

    console, none = Console(), Style()
    assert plain_cell_line(console, Cell("kb-fast"), 12, 1, none, none) is not None
    assert plain_cell_line(console, Text("kb-fast"), 12, 1, none, none) is not None
    assert plain_cell_line(console, Text.from_markup("[b]kb[/b]-fast"), 12, 1, none, none) is not None  # spans
    assert plain_cell_line(console, Text.from_markup("[b]kb[/b]-fast", justify="right"), 12, 1, none, none) is None
    assert plain_cell_line(console, Cell("a much longer cell"), 12, 1, none, none) is None  # Rich crops it
    assert plain_cell_line(console, Cell("two\nlines"), 12, 1, none, none) is None
    assert plain_cell_line(console, Cell("centred", justify="center"), 12, 1, none, none) is None
    assert plain_cell_line(console, "kb-fast", 12, 1, none, none) is None  # a str may be markup


async def test_body_lines_are_drawn_as_datatable_draws_them() -> None:
    """FilledTable assembles a body row's line itself (styles looked up once a draw): for every
    row, cursor row and hover row, the line is DataTable's own."""
    app = _Tables()
    async with app.run_test(size=(120, 40)) as pilot:
        table = app.query_one(FilledTable)
        rows = _rows()[:12]
        refill(table, [("a", "a"), ("b", "b"), ("c", "c"), ("s", "s"), ("o", "o"), ("n", "n")], rows)
        await pilot.pause()
        table._pseudo_class_state = table.get_pseudo_class_state()
        keys = [row.key for row in table.ordered_rows]
        for drawing in (False, True):  # outside a draw, and inside one (its styles kept)
            table._styles_this_draw = {} if drawing else None
            for key, cursor, hover in product(keys, (0, 3, 11), (0, 4, 11)):
                at, over = Coordinate(cursor, 0), Coordinate(hover, 0)
                base = table.rich_style
                ours = table._render_line_in_row(key, 0, base, at, over)
                table._row_render_cache.clear()
                theirs = DataTable._render_line_in_row(table, key, 0, base, at, over)
                table._row_render_cache.clear()
                assert ours == theirs, (key, cursor, hover, drawing)
        table._styles_this_draw = None


def test_a_cut_cell_reads_as_a_cut_text() -> None:
    for text, style, justify in product(TEXTS, STYLES, (None, "left", "right")):
        for width in (1, 2, 3, 5, 12):
            cell = cut(Cell(text, style, justify), width)
            assert isinstance(cell, Cell)
            text_cut = cut(Text(text, style=style, justify=justify), width)  # type: ignore[arg-type]
            assert (cell.plain, cell.style, cell.justify) == (text_cut.plain, text_cut.style, text_cut.justify)
