"""A widget's component styles are kept per styling context: a focus move back to a state seen
before puts that state's styles back instead of styling every component class again, and what is
put back is what Textual would style (issue 41: ~4 ms of the UI thread a key went to restyling
the component classes of the two panes a focus move touches)."""

from __future__ import annotations

from helpers import focus_in_turn, spy_calls
from textual.app import App, ComposeResult
from textual.dom import DOMNode
from textual.widgets import DataTable

from mrptui.widgets.kept_component_styles import KeptComponentStyles


class KeptTable(KeptComponentStyles, DataTable):
    pass


class Tables(App[None]):
    CSS = """
    DataTable { height: 5; }
    DataTable:focus > .datatable--header { background: red; }
    """

    def compose(self) -> ComposeResult:
        yield KeptTable(id="kept")
        yield DataTable(id="stock")


def styled_now(widget: DOMNode, component: str):
    """The component's styles as Textual styles them in the widget's present state."""
    virtual = DOMNode(classes=component)
    virtual._attach(widget)
    widget.app.stylesheet.apply(virtual)
    return virtual.styles


def assert_styled_as_textual_styles(widget: DOMNode) -> None:
    classes = DataTable._get_component_classes()
    assert widget._component_styles.keys() == classes
    for component in classes:
        assert widget._component_styles[component] == styled_now(widget, component), component


async def test_each_focus_state_has_the_styles_textual_gives_it() -> None:
    app = Tables()
    async with app.run_test() as pilot:
        kept = app.query_one("#kept", KeptTable)
        headers = set()
        async for _ in focus_in_turn(pilot):
            assert_styled_as_textual_styles(kept)
            headers.add(kept.get_component_rich_style("datatable--header"))
        assert len(headers) == 2  # the focused header differs (else the test shows nothing)


async def test_a_focus_move_back_styles_no_component_class_again() -> None:
    app = Tables()
    async with app.run_test() as pilot:
        kept, stock = app.query_one("#kept"), app.query_one("#stock")
        for target in (stock, kept, stock):
            target.focus()
            await pilot.pause()
        styled = spy_calls(app.stylesheet, "apply", lambda node, *rest: node._parent)
        repaints = spy_calls(kept, "refresh")
        kept.focus()
        await pilot.pause()
        assert styled.count(stock) > 0  # the stock table styles its classes again
        assert styled.count(kept) == 0
        assert repaints, "the kept table repaints with its focused styles"


async def test_new_rules_are_styled() -> None:
    app = Tables()
    async with app.run_test() as pilot:
        kept = app.query_one("#kept", KeptTable)
        for target in ("#stock", "#kept", "#stock"):
            app.query_one(target).focus()
            await pilot.pause()
        app.stylesheet.add_source("DataTable > .datatable--odd-row { background: blue; }")
        app.refresh_css(animate=False)
        await pilot.pause()
        assert_styled_as_textual_styles(kept)
        assert kept.get_component_styles("datatable--odd-row").background.rgb == (0, 0, 255)
