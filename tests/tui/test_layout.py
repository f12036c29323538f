"""Panes that fit: layout presets, growing and shrinking the focused pane (kept across sessions),
and columns that give way to the terminal's width instead of cutting status words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import make_app
from helpers import ask, record_notifications, settle
from pydantic import ValidationError
from rich.text import Text

from mrptui.layout import LEFT_MIN, PRESETS, PROOFS_MIN, Layout, fit_columns, load_layout, next_preset, save_layout
from mrptui.widgets.column_fit import cut, fit_to_room
from mrptui.widgets.evidence import EvidenceTable
from mrptui.widgets.id_cut import unique_cut
from mrptui.widgets.timeline import AttemptsTimeline


def test_fit_to_room_shrinks_the_widest_columns_first_and_never_below_a_floor() -> None:
    assert fit_to_room([10, 40, 30], 100, [5, 5, 5]) == [10, 40, 30]  # room to spare: content widths
    assert fit_to_room([10, 40, 30], 60, [5, 5, 5]) == [10, 25, 25]
    assert fit_to_room([10, 40, 30], 20, [10, 20, 5]) == [10, 20, 5]  # floors win over the room


def test_a_cut_cell_says_so_and_a_unit_id_keeps_both_ends() -> None:
    assert cut("succeeded quickly", 9).plain == "succeede…"
    assert (
        unique_cut(["orion-stack::chunk-002::unit-007"], 16).apply("orion-stack::chunk-002::unit-007")
        == "orion-s…unit-007"
    )
    assert cut("short", 9).plain == "short"


def test_presets_cycle_and_weights_stay_in_range() -> None:
    assert [next_preset(p).name for p in PRESETS] == [p.name for p in PRESETS[1:] + PRESETS[:1]]
    grown = Layout().resized("attempts", 1)
    assert grown.columns[0] == Layout().columns[0] + 1 and grown.rows[1] == Layout().rows[1] + 1
    assert Layout(columns=(1, 1, 1)).resized("plan", -1).columns == (1, 1, 1)
    with pytest.raises(ValidationError):
        Layout(columns=(0, 3, 2))


def test_the_fitted_split_gives_a_pane_with_nothing_to_show_little_and_shares_what_is_left() -> None:
    empty_left, empty_answer = fit_columns(200, 100, 0, 0.25)  # evidence with nothing to show
    assert empty_left == 100 and empty_answer == 50 and 200 - empty_left - empty_answer == PROOFS_MIN
    left, answer = fit_columns(200, 60, 100, 0.25)  # 40 cells to spare, shared 60:100
    assert (left, answer) == (60 + 40 * 60 // 160, 50)
    # Too little room at 120: the left side gives way to the proofs pane's 50 columns and the answer's 30.
    assert fit_columns(120, 100, 100, 0.25) == (40, 30)
    assert fit_columns(120, 100, 40, 0.25) == (120 - 30 - PROOFS_MIN, 30)
    assert fit_columns(110, 100, 40, 0.25) == (LEFT_MIN, 28)  # the narrowest grid: the timeline keeps 40


def test_an_unreadable_layout_file_is_the_default(tmp_path: Path) -> None:
    bad = tmp_path / "layout.json"
    bad.write_text('{"columns": [99, 1, 1]}')
    assert load_layout(bad) == Layout()


def test_a_layout_file_made_read_only_is_not_replaced(tmp_path: Path) -> None:
    path = tmp_path / "layout.json"
    path.write_text(Layout().model_dump_json(), encoding="utf-8")
    path.chmod(0o400)
    before = path.read_bytes()
    said = save_layout(path, next_preset(Layout()))
    assert said == f"layout not saved to {path}: it is read-only (mode 0400)"
    assert path.read_bytes() == before and not path.with_name("layout.json.tmp").exists()


async def test_f12_and_the_grow_key_change_the_grid_and_are_kept_across_sessions(tmp_path: Path) -> None:
    path = tmp_path / "layout.json"
    app = make_app(layout_path=path)
    async with app.run_test(size=(150, 42)) as pilot:
        await ask(pilot)
        timeline = app.screen.query_one(AttemptsTimeline)
        width = timeline.size.width
        await pilot.press("greater_than_sign")
        await pilot.pause()
        assert timeline.size.width > width  # the focused pane (the timeline) grew
        saved = json.loads(path.read_text())
        # Growing leaves the fitted split for weights (the user's choice wins), starting from what was on screen.
        assert saved["name"] == "custom" and saved["columns"][0] > saved["columns"][1]
        await pilot.press("f12")
        await pilot.pause()
        assert json.loads(path.read_text())["name"] == PRESETS[0].name  # from "custom" back to the first preset
        await pilot.press("f12")
    again = make_app(layout_path=path)
    async with again.run_test(size=(150, 42)) as pilot:
        await pilot.pause()
        assert again.main.pane_layout == PRESETS[1]


@pytest.mark.parametrize("size", [(110, 30), (120, 40), (200, 60)])
async def test_status_words_are_never_cut_at_100_columns_and_more(size) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await ask(pilot)
        await settle(pilot)
        timeline = app.screen.query_one(AttemptsTimeline)
        room = timeline.scrollable_content_region.width
        for row, entry in enumerate(timeline.entries):
            if getattr(entry, "kind", "") != "attempt":
                continue  # plans and backtracks carry no status word
            cells = [timeline.get_cell_at((row, column)) for column in range(len(timeline.columns))]
            reason = cells[-1].plain if isinstance(cells[-1], Text) else str(cells[-1])
            status = reason.split(":")[0]
            widths = [column.width + 2 for column in timeline.columns.values()]
            assert sum(widths) <= room or status in reason[: widths[-1] - 2], (size, reason)
            assert "…" not in status, (size, reason)
        evidence = app.screen.query_one(EvidenceTable)
        labels = [label for label, _ in evidence.drawn_columns]
        shown = sum(width + 2 for _, width in evidence.drawn_columns[: labels.index("fused") + 1])
        assert shown <= evidence.scrollable_content_region.width, size  # the score and fused are never off the edge
        if size[0] >= 200:  # room for every column: nothing is cut
            assert sum(width + 2 for _, width in evidence.drawn_columns) <= evidence.scrollable_content_region.width
            assert not any("…" in str(evidence.cells(row)[1]) for row in range(evidence.row_count))


async def test_after_every_layout_change_the_attempts_rows_fit_their_pane_without_a_scrollbar() -> None:
    """The timeline's pinned symbol column (3 cells, 2 of content) was fitted as 2: every row
    came out one cell wider than the pane, so a horizontal scrollbar took a row and the last
    cell was cropped, after each split change and resize."""
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await ask(pilot)
        timeline = app.main.query_one(AttemptsTimeline)
        timeline.focus()
        checked = []
        for key in ("f12", "f12", "f12", "greater_than_sign", "less_than_sign", "f12", "f12", "f12"):
            await pilot.press(key)
            await pilot.pause()
            await pilot.pause()
            columns = list(timeline.columns.values())
            if columns[-1].width <= 14:
                continue  # the status word's floor wins over a pane that narrow: it scrolls by design
            row = sum(column.width + 2 for column in columns)
            assert row <= timeline.scrollable_content_region.width, (app.main.pane_layout.name, row)
            assert not timeline.show_horizontal_scrollbar, app.main.pane_layout.name
            checked.append(app.main.pane_layout.name)
        assert len(checked) >= 5, checked


async def test_growing_a_pane_while_one_is_zoomed_says_why_instead_of_failing() -> None:
    app = make_app()
    notes = record_notifications(app)
    async with app.run_test(size=(160, 45)) as pilot:
        await ask(pilot)
        app.main.query_one(AttemptsTimeline).focus()
        await pilot.press("z", "greater_than_sign")
        await pilot.pause()
        assert app.main.maximized is not None and app.main.pane_layout == Layout()
        assert any("z restores the grid" in note for note in notes), notes
