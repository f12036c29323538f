"""What keeps the main screen's panes cheap to repaint while the engine runs (issue 25) must not
change what they show: the tables draw from their caches after focus moves and style changes
exactly what a fresh drawing shows, size themselves as DataTable would, and the status line's
height follows its text without laying out the screen for every event count."""

from __future__ import annotations

import pytest
from helpers import ask, spy_calls, until
from rich.text import Text
from textual.app import App, ComposeResult
from textual.geometry import Region, Size
from textual.widget import Widget
from textual.widgets import DataTable

from mrptui.widgets.cell_table import CellTable
from mrptui.widgets.evidence import EvidenceTable
from mrptui.widgets.proofs import ProofTree
from mrptui.widgets.status import StatusLine
from mrptui.widgets.tables import Cell, FilledTable, refill
from mrptui.widgets.timeline import AttemptsTimeline

SIZE = (150, 42)


def drawn(table: Widget) -> list[list]:
    """Every line of the table as the compositor gets it: (text, style) segments."""
    return [list(strip) for strip in table.render_lines(Region(0, 0, *table.size))]


def fresh(table: Widget) -> list[list]:
    """The same lines drawn with no cache at all."""
    if isinstance(table, CellTable):
        table._lines.clear()
    else:
        assert isinstance(table, DataTable)
        table._clear_caches()
    if isinstance(table, FilledTable):
        table._header_cells.clear()  # kept across refills, as the rows' lines
        table._kept_rows.clear()
    table._styles_cache.clear()
    return drawn(table)


async def test_tables_drawn_after_focus_moves_match_a_fresh_drawing_and_show_the_focus(app) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        tables = (app.screen.query_one(EvidenceTable), app.screen.query_one(AttemptsTimeline))
        assert all(table.row_count for table in tables)
        seen: dict[tuple[int, bool], list[list]] = {}
        # Each table gains and loses the focus twice: the second time its lines come from the caches.
        for key in ("3", "2", "1", "3", "2", "1"):
            await pilot.press(key)
            await pilot.pause()
            for index, table in enumerate(tables):
                lines = drawn(table)
                assert lines == fresh(table), f"{table.id} after key {key}"
                seen.setdefault((index, table.has_focus), lines)
        # The cursor row (and the focus tint) differ focused and unfocused: the caches did not hide that.
        for index in range(len(tables)):
            assert seen[(index, True)] != seen[(index, False)]


class _TableApp(App[None]):
    def compose(self) -> ComposeResult:
        yield FilledTable(id="table", cursor_type="row", zebra_stripes=True)
        yield DataTable(id="other")

    def on_mount(self) -> None:
        refill(self.query_one(FilledTable), [("a", "a"), ("b", "b")], [(f"row {i}", i) for i in range(40)])


async def test_a_style_change_without_a_focus_move_is_drawn_not_served_from_the_caches() -> None:
    app = _TableApp()
    async with app.run_test(size=(60, 20)) as pilot:
        table = app.query_one(FilledTable)
        table.focus()
        await pilot.pause()
        app.query_one("#other").focus()
        await pilot.pause()
        before = drawn(table)
        # A stylesheet change (as a theme or CSS reload makes) restyles the unfocused cursor only.
        app.stylesheet.add_source("FilledTable > .datatable--cursor { background: red; }", read_from=("test", "cursor"))
        app.refresh_css(animate=False)
        await pilot.pause()
        after = drawn(table)
        assert after == fresh(table) and after != before
        table.focus()
        await pilot.pause()
        assert drawn(table) == fresh(table)


async def test_tables_take_the_size_datatable_would_give_them(app) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        table = app.screen.query_one(AttemptsTimeline)
        ours = table.virtual_size
        DataTable._update_dimensions(table, list(table.rows))  # measures every cell of every row
        assert table.virtual_size == ours and ours.height == table.row_count + 1
        # The evidence pane is a CellTable: DataTable's size for its columns (each padded) and rows.
        evidence = app.screen.query_one(EvidenceTable)
        width = sum(width + 2 for _, width in evidence.drawn_columns)
        assert evidence.virtual_size == Size(width, evidence.row_count + 1) and evidence.row_count


async def test_the_status_line_is_two_lines_exactly_while_its_text_wraps(app) -> None:
    async with app.run_test(size=(200, 40)) as pilot:
        await ask(pilot)
        # The caller's indexes finish building in the background and re-show the status: not mid-test.
        await until(pilot, lambda: not app.kb_state.indexing and app.kb_state.hdc != "building")
        status = app.screen.query_one(StatusLine)
        heights = []
        for markup, size in (
            ("x " * 80, None),
            (None, (80, 40)),
            ("short", None),
            ("y " * 60, None),
            (None, (200, 40)),
            ("z " * 70, None),
        ):
            if size:
                await pilot.resize_terminal(*size)
            else:
                status.show(markup)
            await pilot.pause()
            await pilot.pause()
            heights.append(status.size.height)
        assert heights == [1, 2, 1, 2, 1, 1]


class _TwoTables(App[None]):
    """The same rows in a FilledTable (Cells, added in one pass) and a stock DataTable (Texts, row by row)."""

    ROWS = [(f"unit-{i:03d}", "kept" if i < 3 else "cut: gap", f"{1 / (i + 1):.3f}") for i in range(30)]

    def __init__(self) -> None:
        super().__init__()
        self.highlighted: list[str] = []

    def compose(self) -> ComposeResult:
        yield FilledTable(id="ours", cursor_type="row", zebra_stripes=True)
        yield DataTable(id="stock", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        ours, stock = self.query_one("#ours", DataTable), self.query_one("#stock", DataTable)
        for table in (ours, stock):
            table.styles.height = 12
            for key in ("id", "kept", "score"):
                table.add_column(key, key=key, width=10)
        ours.add_rows([Cell(a), Cell(b, "green"), Cell(c, justify="right")] for a, b, c in self.ROWS)
        for a, b, c in self.ROWS:
            stock.add_row(Text(a), Text(b, style="green"), Text(c, justify="right"))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.highlighted.append(event.data_table.id or "")


async def test_rows_added_in_one_pass_as_cells_draw_and_behave_as_datatable_rows() -> None:
    app = _TwoTables()
    async with app.run_test(size=(40, 30)) as pilot:
        app.set_focus(None)
        await pilot.pause()
        ours, stock = app.query_one("#ours", DataTable), app.query_one("#stock", DataTable)
        assert sorted(app.highlighted) == ["ours", "stock"]  # the first row gave each cursor a place
        assert ours.row_count == stock.row_count == 30 and ours.virtual_size == stock.virtual_size
        assert drawn(ours) == drawn(stock)
        assert [str(cell) for cell in ours.get_row_at(4)] == [str(cell) for cell in stock.get_row_at(4)]
        focused = []
        for table in (ours, stock):
            table.focus()
            table.move_cursor(row=20)
            await pilot.pause()
            focused.append(drawn(table))
        assert focused[0] == focused[1]


async def test_a_focus_move_restyles_each_pane_it_touches_once_and_lays_nothing_out(app) -> None:
    """Textual restyles a pane matching `:focus-within` as the focus moves and again as its own
    `:focus` flips, and Tree asked for a layout of the whole screen on every style update (issue 41)."""
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        screen = app.screen
        restyled: list[str] = []
        apply = app.stylesheet.apply

        def counting_apply(node, **kwargs):
            if node.id in ("evidence", "proofs", "attempts"):
                restyled.append(node.id)
            return apply(node, **kwargs)

        app.stylesheet.apply = counting_apply
        layouts = []
        refresh_layout = screen._refresh_layout

        def counting_layout(*args, **kwargs):
            layouts.append(1)
            return refresh_layout(*args, **kwargs)

        screen._refresh_layout = counting_layout
        for key, gains, loses in (
            ("3", "evidence", "attempts"),
            ("4", "proofs", "evidence"),
            ("2", "attempts", "proofs"),
        ):
            restyled.clear()
            layouts.clear()
            await pilot.press(key)
            await pilot.pause()
            assert screen.focused is screen.query_one(f"#{gains}")
            assert sorted(restyled) == sorted([gains, loses]), key
            assert not layouts, key


def fresh_tree(tree: ProofTree) -> list[list]:
    tree._line_cache.clear()
    tree._styles_cache.clear()
    return drawn(tree)


async def test_the_proof_tree_drawn_after_focus_moves_and_a_style_change_matches_a_fresh_drawing(app) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        tree = app.screen.query_one(ProofTree)
        seen: dict[bool, list[list]] = {}
        for key in ("4", "2", "4", "2"):
            await pilot.press(key)
            await pilot.pause()
            lines = drawn(tree)
            assert lines == fresh_tree(tree), f"after key {key}"
            seen.setdefault(tree.has_focus, lines)
        assert seen[True] != seen[False]  # the focus shows
        # A stylesheet change with no focus move (as a theme or CSS reload makes) is drawn.
        before = drawn(tree)
        app.stylesheet.add_source("ProofTree > .tree--label { color: red; }", read_from=("test", "label"))
        app.refresh_css(animate=False)
        await pilot.pause()
        after = drawn(tree)
        assert after != before and after == fresh_tree(tree)


@pytest.mark.paints  # the first frame's lines are what it reads
async def test_a_refilled_table_is_first_drawn_at_its_cursor_not_at_the_top() -> None:
    """`clear` scrolls to the top; a cursor moved to the last row right after the refill is in
    the first frame drawn (DataTable scrolled only after that frame: the top rows flashed and the
    pane was drawn twice, at the end of every question for the timeline)."""
    app = _TableApp()
    async with app.run_test(size=(60, 20)) as pilot:
        table = app.query_one(FilledTable)
        await pilot.pause()
        drawn_at = spy_calls(table, "render_lines", lambda crop: table.scroll_y)
        for rows in (60, 80):
            drawn_at.clear()
            refill(table, [("a", "a"), ("b", "b")], [(f"row {i}", i) for i in range(rows)])
            table.move_cursor(row=rows - 1, animate=False, scroll=True)
            await pilot.pause()
            await pilot.pause()
            bottom = table.virtual_size.height - table.scrollable_content_region.height
            assert bottom > 0 and table.scroll_y == bottom
            assert drawn_at and set(drawn_at) == {bottom}, drawn_at


async def test_a_refill_keeps_the_header_cells_drawn_and_draws_a_changed_label_anew() -> None:
    app = _TableApp()
    async with app.run_test(size=(60, 12)) as pilot:
        table = app.query_one(FilledTable)
        columns = [("id", "unit"), ("score", "score")]
        refill(table, columns, [[Cell("a"), Cell("0.5")], [Cell("b"), Cell("0.25")]])
        await pilot.pause()
        drawn(table)
        kept = table._header_cells
        misses = kept.misses
        refill(table, columns, [[Cell("c"), Cell("0.75")]])  # a new question: new rows, same columns
        table._styles_cache.clear()
        with_cache = drawn(table)
        assert kept.misses == misses  # no header cell drawn again
        assert with_cache == fresh(table)
        refill(table, [("id", "unit id"), ("score", "score")], [[Cell("c"), Cell("0.75")]])
        table._styles_cache.clear()
        relabelled = drawn(table)
        assert relabelled == fresh(table)
        assert "unit id" in "".join(segment.text for segment in relabelled[0])


async def test_a_refill_keeps_the_lines_of_the_rows_it_did_not_change_and_draws_the_others_anew() -> None:
    """A live question refills its timeline on every event with a row or two new: the rows that
    show the same cells in the same place keep their lines (issue 41)."""
    app = _TableApp()
    async with app.run_test(size=(60, 12)) as pilot:
        table = app.query_one(FilledTable)
        columns = [("sym", ""), ("what", "attempt")]
        rows = [[Text("✓", style="green"), Text(f"kb-{i}")] for i in range(5)]
        refill(table, columns, rows)
        await pilot.pause()
        drawn(table)
        kept = table._kept_rows
        misses = kept.misses
        # Row 1 changes its text, row 3 only its style; a row is added; the cursor stays on row 0.
        rows[1] = [Text("✓", style="green"), Text("kb-one")]
        rows[3] = [Text("✓", style="red"), Text("kb-3")]
        refill(table, columns, [*rows, [Text("⋯"), Text("kb-5")]])
        await pilot.pause()  # the table grows by the new row
        table._styles_cache.clear()
        with_kept = drawn(table)
        assert kept.misses - misses == 3  # rows 1, 3 and 5; rows 0, 2 and 4 kept
        assert with_kept == fresh(table)
        texts = ["".join(segment.text for segment in line) for line in with_kept]
        assert "kb-one" in texts[2] and "kb-5" in texts[6]


async def test_a_header_style_change_draws_the_kept_header_cells_anew() -> None:
    app = _TableApp()
    async with app.run_test(size=(60, 20)) as pilot:
        table = app.query_one(FilledTable)
        before = drawn(table)
        app.stylesheet.add_source("FilledTable > .datatable--header { color: red; }", read_from=("test", "header"))
        app.refresh_css(animate=False)
        await pilot.pause()
        after = drawn(table)
        assert after[0] != before[0]
        assert after == fresh(table)


async def test_rows_that_overflow_the_table_are_fitted_beside_its_scrollbar_before_it_shows() -> None:
    """Fitted to the width the table had before its vertical scrollbar showed, the rows were one
    cell too wide once it did: a horizontal scrollbar, a refit and two more layout passes of the
    whole screen, in every question's timeline (issue 41)."""
    app = _TableApp()
    async with app.run_test(size=(60, 20)) as pilot:
        table = app.query_one(FilledTable)
        await pilot.pause()
        columns = [("a", "a"), ("b", "b")]
        refill(table, columns, [("short", 1)], floors={"b": 4})
        await pilot.pause()
        assert not table.show_vertical_scrollbar
        rows = [(f"row {i}", "x" * 80) for i in range(40)]
        refill(table, columns, rows, floors={"b": 4})
        await pilot.pause()
        await pilot.pause()
        assert table.show_vertical_scrollbar and not table.show_horizontal_scrollbar
        assert table.virtual_size.width == table.scrollable_content_region.width
