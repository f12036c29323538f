"""Run diff snapshots: a long line wraps on one side only and every row below stays level.

Regenerate with `pytest tests/tui/test_snapshots_diff.py --snapshot-update`, then look at each SVG.
"""

from __future__ import annotations

from conftest import make_app
from test_diff import LONG, changed_right, records

from mrptui.screens.diff import DiffScreen


def snap_diff(snap_compare, size: tuple[int, int], *keys: str, **right) -> bool:
    async def run_before(pilot):
        await pilot.app.push_screen(DiffScreen(*records(**right)))
        await pilot.press(*keys)
        await pilot.pause()

    return snap_compare(make_app(), terminal_size=size, run_before=run_before)


def test_diff_150x42_long_answer_on_the_right(snap_compare):
    assert snap_diff(snap_compare, (150, 42), "end", **changed_right())


def test_diff_80x24_long_answer_on_the_right(snap_compare):
    assert snap_diff(snap_compare, (80, 24), "end", **changed_right())


def test_diff_80x24_changes_only(snap_compare):
    assert snap_diff(snap_compare, (80, 24), "f", **changed_right())


def test_diff_200x60_long_answer_only(snap_compare):
    assert snap_diff(snap_compare, (200, 60), answer=LONG * 2)
