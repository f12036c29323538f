"""The evidence pane's table (CellTable: rows drawn on demand, issue 41) draws every line as
Textual's DataTable draws the same cells, segment for segment and style for style (the mouse
metadata included), focused or not, scrolled, under the cursor and under the mouse; and its keys,
clicks and messages do what DataTable's did for the evidence pane."""

from __future__ import annotations

from pathlib import Path

from rich.style import Style
from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import DataTable

import mrptui
from mrptui.widgets.cell_strip import Cell
from mrptui.widgets.cell_table import CellTable
from mrptui.widgets.virtual_table import VirtualTable

ROWS = [
    (f"unit-{i:03d}", "kept" if i % 3 else "cut: gap", f"{1 / (i + 1):.3f}" if i % 4 else "—", "Narrative" * (i % 2))
    for i in range(40)
]
WIDTHS = (8, 8, 5, 9)
LABELS = ("unit", "kept / cut", "score", "role")  # "kept / cut" is wider than its column: cut in the header


def cells(row: int) -> list[Cell]:
    unit, kept, score, role = ROWS[row]
    # A role with meta of its own: merged before the cell's row and column, as Rich merges it.
    role_style = Style(meta={"@click": "role", "column": -1}) if row % 5 == 0 else ""
    return [
        Cell(unit),
        Cell(kept, "green" if kept == "kept" else "yellow"),
        Cell(score, "", "right"),
        Cell(role, role_style),
    ]


class _Tables(App[None]):
    CSS_PATH = Path(mrptui.__file__).parent / "app.tcss"
    CSS = "CellTable, DataTable { height: 12; }"

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[tuple[str, str, int]] = []
        self.headers: list[int] = []

    def compose(self) -> ComposeResult:
        yield CellTable(id="ours")
        yield DataTable(id="stock", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        ours, stock = self.query_one(CellTable), self.query_one(DataTable)
        ours.header_clicked = self.headers.append  # type: ignore[method-assign]
        ours.fill(list(zip(LABELS, WIDTHS)), len(ROWS), cells)
        for label, width in zip(LABELS, WIDTHS):
            stock.add_column(Text(label[: width - 1] + "…") if len(label) > width else label, width=width)
        for row in range(len(ROWS)):
            stock.add_row(*(c.__rich__() for c in cells(row)))

    def on_virtual_table_row_highlighted(self, event: VirtualTable.RowHighlighted) -> None:
        self.messages.append(("highlighted", "ours", event.cursor_row))

    def on_virtual_table_row_selected(self, event: VirtualTable.RowSelected) -> None:
        self.messages.append(("selected", "ours", event.cursor_row))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.messages.append(("highlighted", "stock", event.cursor_row))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.messages.append(("selected", "stock", event.cursor_row))


def lines(table: CellTable | DataTable) -> list[list]:
    return [list(table.render_line(y)) for y in range(table.size.height)]


async def press_in_each(pilot, *keys: str) -> tuple[CellTable, DataTable]:
    """Focus each table in turn and press `keys` there."""
    ours, stock = pilot.app.query_one(CellTable), pilot.app.query_one(DataTable)
    for table in (ours, stock):
        table.focus()
        await pilot.press(*keys)
    return ours, stock


def same_lines(app: _Tables) -> bool:
    ours, stock = app.query_one(CellTable), app.query_one(DataTable)
    return lines(ours) == lines(stock)


async def test_every_line_is_datatables_focused_or_not_scrolled_and_under_the_cursor() -> None:
    app = _Tables()
    async with app.run_test(size=(50, 30)) as pilot:
        ours, stock = app.query_one(CellTable), app.query_one(DataTable)
        app.set_focus(None)  # the app focused the first table
        await pilot.pause()
        assert ours.virtual_size == stock.virtual_size
        assert same_lines(app)
        await press_in_each(pilot, "down", "down", "pagedown", "down")
        assert ours.cursor_row == stock.cursor_row and ours.scroll_offset == stock.scroll_offset
        assert ours.cursor_row > 10 and ours.scroll_offset.y > 0  # scrolled to keep the cursor in view
        assert lines(ours) != lines(stock)  # ours unfocused, stock focused: the cursor's colour, the tint
        app.set_focus(None)
        await pilot.pause()
        assert same_lines(app)
        ours.focus()
        await pilot.pause()
        ours_focused = lines(ours)
        stock.focus()
        await pilot.pause()
        assert ours_focused == lines(stock)


async def test_the_hover_row_and_header_are_datatables_and_a_key_hides_the_hover() -> None:
    app = _Tables()
    async with app.run_test(size=(50, 30)) as pilot:
        ours, stock = await press_in_each(pilot, "down")
        app.set_focus(None)
        for offset in ((3, 4), (3, 0)):  # a row, then the header
            drawn = []
            for table in (ours, stock):
                await pilot.hover(table, offset=offset)
                await pilot.pause()
                drawn.append(lines(table))
            assert drawn[0] == drawn[1], offset
        ours.focus()
        await pilot.hover(ours, offset=(3, 4))
        await pilot.pause()
        hovered = lines(ours)
        await pilot.press("down")
        assert lines(ours) != hovered and not ours._show_hover


async def test_keys_and_clicks_post_datatables_messages_and_a_header_click_names_its_column() -> None:
    app = _Tables()
    async with app.run_test(size=(50, 30)) as pilot:
        ours, stock = app.query_one(CellTable), app.query_one(DataTable)
        for table in (ours, stock):
            table.focus()
            app.messages.clear()
            await pilot.press("down", "down", "enter")
            await pilot.click(table, offset=(3, 5))  # row 4: highlighted
            await pilot.click(table, offset=(3, 5))  # again: selected
            await pilot.pause()
            kept = [(kind, row) for kind, _, row in app.messages]
            if table is ours:
                ours_kept = kept
        assert ours_kept == kept
        assert ("selected", 2) in kept and ("selected", 4) in kept
        await pilot.click(ours, offset=(12, 0))  # the second column's header cell
        assert app.headers == [1]
