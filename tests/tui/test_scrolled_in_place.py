"""A table whose height does not follow its rows takes new rows without a layout pass of the
screen, its scrollbar as a layout pass leaves it (mrptui/widgets/laid_out.py `ScrolledInPlace`;
issue 41: a live question's timeline laid the screen out after most renders)."""

from __future__ import annotations

from helpers import spy_calls
from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import DataTable

from mrptui.widgets.tables import FilledTable, refill


class Tables(App[None]):
    AUTO_FOCUS = None  # a focused table tints its scrollbar: both alike
    CSS = """
    DataTable { width: 1fr; height: 8; }
    #auto { height: auto; max-height: 100; }
    """

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield FilledTable(id="fixed")
            yield DataTable(id="stock")
            yield FilledTable(id="auto")

    def fill(self, name: str, rows: int) -> None:
        refill(self.query_one(f"#{name}", DataTable), [("n", "n")], ([str(n)] for n in range(rows)))


def drawn(widget: Widget) -> list[list]:
    return [list(strip) for strip in widget.render_lines(Region(0, 0, *widget.size))]


def bar_of(table: DataTable) -> tuple:
    bar = table.vertical_scrollbar
    return table.show_vertical_scrollbar, bar.window_virtual_size, bar.window_size, table.max_scroll_y


async def test_new_rows_in_a_fixed_height_table_lay_nothing_out_and_its_scrollbar_follows() -> None:
    app = Tables()
    async with app.run_test(size=(90, 12)) as pilot:
        fixed, stock = app.query_one("#fixed", FilledTable), app.query_one("#stock", DataTable)
        for name in ("fixed", "stock"):
            app.fill(name, 20)  # the bar shows: that lays out
        await pilot.pause()
        await pilot.pause()
        passes = spy_calls(app.screen, "_refresh_layout")
        for rows in (30, 45, 12):
            app.fill("fixed", rows)
            await pilot.pause()
            await pilot.pause()
            assert not passes, f"{rows} rows laid the screen out"
            app.fill("stock", rows)
            await pilot.pause()
            await pilot.pause()
            assert passes, "the stock table's new virtual size lays out (else this test shows nothing)"
            passes.clear()
            assert bar_of(fixed) == bar_of(stock) == (True, rows + 1, 8, rows + 1 - 8)
            for table in (fixed, stock):
                table.scroll_end(animate=False, immediate=True)
            await pilot.pause()
            assert fixed.scroll_y == stock.scroll_y == rows + 1 - 8
            assert drawn(fixed.vertical_scrollbar) == drawn(stock.vertical_scrollbar)
            assert drawn(fixed) == drawn(stock)
            passes.clear()


async def test_a_table_whose_height_follows_its_rows_or_whose_scrollbar_comes_or_goes_still_lays_out() -> None:
    app = Tables()
    async with app.run_test(size=(90, 30)) as pilot:
        auto, fixed = app.query_one("#auto", FilledTable), app.query_one("#fixed", FilledTable)
        app.fill("auto", 3)
        app.fill("fixed", 3)
        await pilot.pause()
        await pilot.pause()
        assert auto.size.height == 4 and not fixed.show_vertical_scrollbar
        app.fill("auto", 9)
        await pilot.pause()
        await pilot.pause()
        assert auto.size.height == 10
        app.fill("fixed", 20)  # overflows now: the bar shows and takes a cell from the rows
        await pilot.pause()
        await pilot.pause()
        assert fixed.show_vertical_scrollbar and fixed.vertical_scrollbar.display
        assert (
            fixed.scrollable_content_region.width == fixed.content_region.width - fixed.styles.scrollbar_size_vertical
        )
        app.fill("fixed", 2)
        await pilot.pause()
        await pilot.pause()
        assert not fixed.show_vertical_scrollbar and fixed.scrollable_content_region.width == fixed.content_region.width
