"""Scrollbars repaint when their window, position or colours change and keep their lines when a
layout pass or a restyle leaves them alone (issue 41: four scrollbar draws in five while a
question ran drew the lines the bar had drawn before, and a focus move drew ~5 bars)."""

from __future__ import annotations

from helpers import spy_calls
from textual.app import App, ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import Static

from mrptui.widgets.quiet_scrollbars import KeptScrollBar, QuietScrollbars


class QuietScroll(QuietScrollbars, VerticalScroll):
    pass


class Panes(App[None]):
    AUTO_FOCUS = None  # a focus move restyles the pane, which repaints its bars (Textual's own)
    CSS = """
    VerticalScroll { width: 1fr; height: 10; overflow-x: hidden; }
    Static { width: auto; }
    """

    def compose(self) -> ComposeResult:
        with Horizontal():
            with QuietScroll(id="quiet"):
                yield Static("x", id="quiet-text")
            with VerticalScroll(id="stock"):
                yield Static("x", id="stock-text")

    def both(self, text: str) -> None:
        for name in ("quiet", "stock"):
            self.query_one(f"#{name}-text", Static).update(text)


def drawn(widget: Widget) -> list[list]:
    return [list(strip) for strip in widget.render_lines(Region(0, 0, *widget.size))]


async def test_a_quiet_scrollbar_shows_what_the_stock_one_shows_as_its_pane_grows_shrinks_and_scrolls() -> None:
    app = Panes()
    async with app.run_test(size=(80, 12)) as pilot:
        quiet, stock = app.query_one("#quiet"), app.query_one("#stock")
        shown = set()
        for lines, scroll in ((30, 0), (30, 12), (60, 12), (15, 3), (60, 40)):
            app.both("\n".join(f"line {n}" for n in range(lines)))
            await pilot.pause()
            quiet.scroll_to(y=scroll, animate=False)
            stock.scroll_to(y=scroll, animate=False)
            await pilot.pause()
            bar = drawn(quiet.vertical_scrollbar)
            assert bar == drawn(stock.vertical_scrollbar), (lines, scroll)
            shown.add(str(bar))
        assert len(shown) == 5  # each step moved or resized the thumb


async def thirty_lines(app: Panes, pilot) -> tuple:
    """Both panes showing 30 lines (a bar in each), laid out and drawn: (quiet, stock)."""
    app.both("\n".join(f"line {n}" for n in range(30)))
    await pilot.pause()
    await pilot.pause()
    return app.query_one("#quiet"), app.query_one("#stock")


async def test_a_resize_that_leaves_the_window_alone_does_not_repaint_the_bar() -> None:
    app = Panes()
    async with app.run_test(size=(80, 12)) as pilot:
        quiet, stock = await thirty_lines(app, pilot)
        repaints = {
            name: spy_calls(pane.vertical_scrollbar, "refresh") for name, pane in (("quiet", quiet), ("stock", stock))
        }
        before = drawn(quiet.vertical_scrollbar)
        # What a layout pass runs when a pane's size or virtual size changed (here its width only).
        for pane in (quiet, stock):
            pane._scroll_update(pane.virtual_size.with_width(pane.virtual_size.width + 5))
        assert repaints["stock"], "the stock bar repaints (else this test shows nothing)"
        assert repaints["quiet"] == []
        assert drawn(quiet.vertical_scrollbar) == before == drawn(stock.vertical_scrollbar)


async def test_a_focus_move_keeps_the_bar_lines_and_a_new_colour_is_drawn() -> None:
    app = Panes()
    async with app.run_test(size=(80, 12)) as pilot:
        quiet, stock = await thirty_lines(app, pilot)
        bar = quiet.vertical_scrollbar
        assert isinstance(bar, KeptScrollBar)
        for focused in (quiet, stock, None):  # the bar's own styles are first applied on the way
            app.set_focus(focused)
            await pilot.pause()
        before = drawn(bar)
        draws = spy_calls(bar._styles_cache, "render_widget")
        for focused in (quiet, stock, None):  # each restyles the pane, its colours set again
            app.set_focus(focused)
            await pilot.pause()
            assert drawn(bar) == before
        assert draws == []
        for pane in (quiet, stock):
            pane.styles.scrollbar_color = "red"
        await pilot.pause()
        after = drawn(bar)
        assert draws and after != before
        assert after == drawn(stock.vertical_scrollbar)
