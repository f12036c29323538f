"""Panes fit the terminal, checked on the rendered screen text: no status word cut at 100 columns
and more, and at 200 columns no pane leaves a band wider than 20 columns empty on every row."""

from __future__ import annotations

import re

import pytest
from conftest import make_app
from helpers import ask, settle

STATUS_WORDS = (
    "success",
    "accepted",
    "rejected",
    "insufficient",
    "unsupported",
    "error",
    "skipped",
    "running",
    "not reached",
    "fused",
)
BAND = 20


def screen_lines(app) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


def cut_words(lines: list[str]) -> list[str]:
    """Status words shown cut (`succ…`, `sta…` of `status`), with the line they are on."""
    found = []
    for line in lines:
        for word in (*STATUS_WORDS, "status"):
            for size in range(3, len(word)):
                if re.search(rf"(?<![\w-]){re.escape(word[:size])}…", line):
                    found.append(f"{word[:size]}… in {line.strip()!r}")
    return found


def empty_bands(lines: list[str]) -> dict[tuple[int, int], int]:
    """Per pane (the columns between two `│` borders), the blank columns at its right that no row
    of the pane uses; only panes with three rows of content or more count."""
    rows: dict[tuple[int, int], list[str]] = {}
    for line in lines:
        bars = [i for i, ch in enumerate(line) if ch == "│"]
        for left, right in zip(bars, bars[1:]):
            if right - left > 2:
                rows.setdefault((left, right), []).append(line[left + 1 : right])
    bands = {}
    for place, texts in rows.items():
        filled = [text for text in texts if text.strip()]
        if len(filled) >= 3:
            bands[place] = min(len(text) - len(text.rstrip()) for text in filled)
    return bands


async def _screens(pilot):
    """The main screen after a question, the KB screen (F2), then a unit's detail from the
    evidence: one app and one question for the three screens, each read only."""
    await ask(pilot, leave=False)
    yield "MainScreen"
    await pilot.press("escape", "f2")
    await settle(pilot)
    yield "KBScreen"
    await pilot.press("escape", "3", "enter")
    await settle(pilot)
    yield "EvidenceDetailScreen"


def _no_status_word_is_cut(app, screen: str) -> None:
    lines = screen_lines(app)
    assert any("success" in line for line in lines) or screen != "MainScreen"
    assert cut_words(lines) == [], screen


@pytest.mark.parametrize("size", [(120, 40), (200, 60)], ids=["120", "200"])
async def test_no_status_word_is_cut_and_at_200_columns_no_pane_leaves_a_wide_empty_band(size) -> None:
    """Both checks read the same screens, so one app serves them."""
    app = make_app()
    seen = []
    async with app.run_test(size=size) as pilot:
        async for screen in _screens(pilot):
            await pilot.pause()
            assert type(app.screen).__name__ == screen
            seen.append(screen)
            _no_status_word_is_cut(app, screen)
            if size[0] >= 200:
                bands = empty_bands(screen_lines(app))
                assert bands and max(bands.values()) <= BAND, (screen, bands)
    assert seen == ["MainScreen", "KBScreen", "EvidenceDetailScreen"]


def test_the_checks_see_a_cut_word_and_an_empty_band() -> None:
    lines = ["│ ✓ kb-fast  succ… │", *["│ short" + " " * 30 + "│"] * 3]
    assert cut_words(lines) == ["succ… in '│ ✓ kb-fast  succ… │'"]
    assert empty_bands(lines) == {(0, 37): 30}


async def test_the_fitted_split_holds_while_a_run_is_live_and_fits_again_when_it_ends() -> None:
    """Issue 25, keypress while a question runs: a pane's content changing width mid-run refitted
    (and repainted) every pane; the split now waits for the run to hold or end."""
    from mrptui.widgets.tables import report_natural_width

    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await ask(pilot)
        main, grid = app.main, app.main.query_one("#panels")
        before = str(grid.styles.grid_columns)
        main.freeze_fit(True)  # as the run driver does while the engine runs
        for pane in ("#plan", "#attempts"):  # the left column's panes now want little room
            report_natural_width(main.query_one(pane), 20)
        await pilot.pause()  # the screen hears of it
        assert str(grid.styles.grid_columns) == before
        main.freeze_fit(False)  # the run held or ended
        assert str(grid.styles.grid_columns) != before
