"""A pane's styled lines are kept per look: a focus move back to a look drawn before styles no
line again while its content lines are the same, and what it draws is what Textual draws
(issue 41: styling the two panes' lines again was about half of a panel key's frame)."""

from __future__ import annotations

import pytest
from helpers import focus_in_turn
from textual._styles_cache import StylesCache
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import DataTable

from mrptui.widgets.kept_lines import KeptLines, KeptStylesCache

pytestmark = pytest.mark.paints  # every frame painted, as users' runs paint them


class KeptTable(KeptLines, DataTable):
    pass


class Tables(App[None]):
    CSS = """
    DataTable { height: 8; border: round blue; padding: 1 1; }
    DataTable:focus { border: heavy red; }
    """

    def compose(self) -> ComposeResult:
        yield KeptTable(id="kept")
        yield DataTable(id="stock")

    def on_mount(self) -> None:
        for table in self.query(DataTable):
            table.add_columns("name", "score")
            table.add_rows([(f"row {i}", str(i)) for i in range(3)])


def drawn(table: Widget) -> list:
    return table.render_lines(Region(0, 0, *table.outer_size))


def as_textual_draws(table: Widget) -> list:
    """The widget's lines as Textual's own StylesCache draws them now, from nothing kept."""
    return StylesCache().render_widget(table, Region(0, 0, *table.outer_size))


@pytest.fixture
def styled(monkeypatch: pytest.MonkeyPatch) -> list:
    """The StylesCache of every line Textual styles (the kept cache's misses call Textual's)."""
    calls: list = []
    render_line = StylesCache.render_line

    def spied(self, *args, **kwargs):
        calls.append(self)
        return render_line(self, *args, **kwargs)

    monkeypatch.setattr(StylesCache, "render_line", spied)
    return calls


async def test_each_look_draws_what_textual_draws() -> None:
    app = Tables()
    async with app.run_test() as pilot:
        kept = app.query_one("#kept", KeptTable)
        looks = set()
        async for _ in focus_in_turn(pilot):
            lines = drawn(kept)
            assert lines == as_textual_draws(kept)
            looks.add(tuple(tuple(line) for line in lines))
        assert len(looks) == 2  # focused and not differ (else the test shows nothing)


async def test_a_focus_move_back_styles_no_line_again(styled: list) -> None:
    app = Tables()
    async with app.run_test() as pilot:
        kept, stock = app.query_one("#kept"), app.query_one("#stock")
        for target in (stock, kept, stock):
            target.focus()
            await pilot.pause()
        styled.clear()
        kept.focus()
        await pilot.pause()
        assert styled.count(stock._styles_cache) > 0  # the stock table styles its lines again
        assert styled.count(kept._styles_cache) == 0
        assert drawn(kept) == as_textual_draws(kept)


async def test_a_changed_content_line_is_styled_again(styled: list) -> None:
    app = Tables()
    async with app.run_test() as pilot:
        kept = app.query_one("#kept", KeptTable)
        stock = app.query_one("#stock")
        for target in (kept, stock):
            target.focus()
            await pilot.pause()
        kept.update_cell_at((1, 0), "row 9")
        await pilot.pause()
        styled.clear()
        kept.focus()
        await pilot.pause()
        assert 0 < styled.count(kept._styles_cache) < kept.outer_size.height  # the changed row, not all
        lines = drawn(kept)
        assert lines == as_textual_draws(kept)
        assert any("row 9" in line.text for line in lines)


async def test_a_new_theme_is_a_new_look() -> None:
    app = Tables()
    async with app.run_test() as pilot:
        kept = app.query_one("#kept", KeptTable)
        for target in (kept, app.query_one("#stock"), kept):
            target.focus()
            await pilot.pause()
        before = drawn(kept)
        app.theme = "nord" if app.theme != "nord" else "gruvbox"
        await pilot.pause()
        lines = drawn(kept)
        assert lines == as_textual_draws(kept)
        assert lines != before


async def test_the_explorers_panes_draw_what_textual_draws_as_panel_keys_move_focus(app, styled: list) -> None:
    from helpers import ask

    async with app.run_test(size=(150, 42)) as pilot:
        await ask(pilot)
        app.main.action_panel("attempts")
        await pilot.pause()
        panes = [app.main.query_one(f"#{pane}") for pane in ("plan", "answer", "attempts", "evidence", "proofs")]
        assert all(isinstance(pane._styles_cache, KeptStylesCache) for pane in panes)
        restyled = []
        for _turn in range(2):
            restyled.append(0)
            for key in ("1", "3", "4", "2"):
                styled.clear()
                await pilot.press(key)
                restyled[-1] += sum(styled.count(pane._styles_cache) for pane in panes)
                for pane in panes:
                    assert drawn(pane) == as_textual_draws(pane), (key, pane.id)
        assert restyled[0] > 0 and restyled[1] == 0  # each look styled once, then kept
