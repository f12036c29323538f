"""Layout snapshots (sync tests: snap_compare runs the app itself). Fixed size, theme and data.

Regenerate with `pytest tests/tui/test_snapshots.py --snapshot-update`, then look at each view
(`python tests/tui/demo.py` shows the same states) before committing the SVGs.
"""

from __future__ import annotations

from conftest import make_app
from helpers import ask, select_timeline_row, settle

WIDE = (160, 45)


async def _finish(pilot) -> None:
    await settle(pilot)
    pilot.app.clear_notifications()
    await pilot.pause()


def test_main_after_thinkingdb_run(snap_compare):
    async def run_before(pilot):
        await ask(pilot)
        await _finish(pilot)

    assert snap_compare(make_app(), terminal_size=WIDE, run_before=run_before)


def test_mid_step_at_level_one_backtrack(snap_compare):
    async def run_before(pilot):
        await ask(pilot)
        await pilot.press("home", "full_stop", "full_stop")  # the second backtrack: kb-fast → kb-thinkingdb
        await _finish(pilot)

    assert snap_compare(make_app(), terminal_size=WIDE, run_before=run_before)


def test_mid_step_at_level_two_replan(snap_compare):
    async def run_before(pilot):
        await ask(pilot, "compare airflow and luigi")
        await pilot.press("home", "full_stop", "full_stop", "n")  # the L2 backtrack, then the new plan
        await _finish(pilot)

    assert snap_compare(make_app(), terminal_size=WIDE, run_before=run_before)


def test_answer_says_a_budget_stopped_the_closure(snap_compare):
    async def run_before(pilot):
        await ask(pilot, "cut short: which tools are relevant for data pipelines")
        await _finish(pilot)

    assert snap_compare(make_app(), terminal_size=WIDE, run_before=run_before)


def test_evidence_breakdown(snap_compare):
    async def run_before(pilot):
        await ask(pilot)
        await pilot.press("3", "down", "enter")
        await _finish(pilot)

    assert snap_compare(make_app(), terminal_size=WIDE, run_before=run_before)


def test_proof_tree_expanded(snap_compare):
    async def run_before(pilot):
        await ask(pilot)
        await pilot.press("4", "asterisk")
        await _finish(pilot)

    assert snap_compare(make_app(), terminal_size=WIDE, run_before=run_before)


def test_kb_screen_with_validation_errors(snap_compare):
    async def run_before(pilot):
        await pilot.press("escape", "k", "down", "down")
        await _finish(pilot)

    assert snap_compare(make_app(), terminal_size=WIDE, run_before=run_before)


def test_kb_screen_at_80x24_keeps_its_counts(snap_compare):
    async def run_before(pilot):
        await pilot.press("escape", "k")
        await _finish(pilot)

    app = make_app(kb_label="/a/rather/long/path/to/the/knowledge/base/folder")
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_kb_screen_selected_unit_wraps_under_its_value(snap_compare):
    """At 80×24 the Luigi unit's claim wraps in the selected-unit pane, under the claim's first line."""

    async def run_before(pilot):
        await pilot.press("escape", "k", "down", "down", "down", "down")
        await _finish(pilot)

    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=run_before)


def test_rules_screen_after_a_run(snap_compare):
    async def run_before(pilot):
        await ask(pilot)
        await pilot.press("R")
        await _finish(pilot)

    assert snap_compare(make_app(), terminal_size=WIDE, run_before=run_before)


def test_run_diff_after_pinning(snap_compare):
    async def run_before(pilot):
        await ask(pilot)
        await select_timeline_row(pilot, lambda row: row.plugin == "kb-fast")
        await pilot.press("x")
        await settle(pilot)
        await pilot.press("d")
        await _finish(pilot)

    assert snap_compare(make_app(), terminal_size=WIDE, run_before=run_before)


def test_help_for_the_evidence_panel(snap_compare):
    async def run_before(pilot):
        await ask(pilot)
        await pilot.press("3", "f1")
        await _finish(pilot)

    assert snap_compare(make_app(), terminal_size=WIDE, run_before=run_before)


def test_small_terminal_80x24(snap_compare):
    async def run_before(pilot):
        await ask(pilot)
        await _finish(pilot)

    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=run_before)


def test_small_terminal_answer_tab(snap_compare):
    async def run_before(pilot):
        await ask(pilot)
        await pilot.press("5")
        await _finish(pilot)

    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=run_before)


def test_answer_tab_shows_type_lead_support_and_links(snap_compare):
    async def run_before(pilot):
        await ask(pilot, "which tool runs the nightly pipelines")
        await pilot.press("5")
        await _finish(pilot)

    assert snap_compare(make_app(), terminal_size=(100, 30), run_before=run_before)


def test_light_theme_large_terminal(snap_compare):
    async def run_before(pilot):
        await ask(pilot)
        await pilot.press("ctrl+t")
        await _finish(pilot)

    assert snap_compare(make_app(), terminal_size=(200, 50), run_before=run_before)


def test_multi_line_question_box(snap_compare):
    async def run_before(pilot):
        await pilot.pause()  # the box takes focus once the main screen is mounted
        await pilot.press(
            *"given airflow uses dag scheduling",
            "ctrl+j",
            *"which tools are relevant",
            "ctrl+j",
            *"for data pipelines?",
        )
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=(100, 30), run_before=run_before)


def test_answer_panel_shows_the_type_lead_support_check_and_lexicon_links(snap_compare):
    # Issue 24: the answer panel shows the answer type, the lead, the support check, the lexicon
    # links it used and the references it resolved; zoomed, so every line is in the frame.
    async def run_before(pilot):
        await ask(pilot, "which tool runs the nightly pipelines")
        await pilot.press("5", "z")
        await _finish(pilot)

    assert snap_compare(make_app(), terminal_size=(100, 30), run_before=run_before)
