"""The eval screen (F4) on a real session over a KB the test writes (a lighthouse log, unlike the
sample KB), and the problems banner: edit → reload → re-run marks what changed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import make_app
from helpers import settle
from textual.widgets import DataTable, Static

from core.infra.resources import config_dir
from core.kernel.session import Session
from core.units import Caller
from mrptui.screens.eval import NEWLY_FAILING, NEWLY_PASSING, EvalScreen, QuestionRow, changes
from mrptui.screens.modals import TextModal

LAMP = """## Context Unit lighthouse::chunk-000::unit-000
Role: Definition
Topic: Fresnel lens
Claim: The Fresnel lens focuses the lamp into a beam visible for twenty nautical miles.

## Context Unit lighthouse::chunk-000::unit-001
Role: Procedure
Topic: Winding the clockwork
Procedure: 1. Lift the weight to the top of the tower. 2. Engage the pawl. 3. Check the rotation period.
"""

QUERIES = [
    {
        "id": "lens",
        "question": "What is the Fresnel lens?",
        "expect_evidence": ["lighthouse::chunk-000::unit-000"],
        "must_not_appear": [],
        "expect_status": "grounded",
    },
    {
        "id": "winding",
        "question": "How do I wind the clockwork?",
        "expect_evidence": ["lighthouse::chunk-000::unit-001"],
        "must_not_appear": [],
    },
]


@pytest.fixture
def workspace(tmp_path: Path) -> tuple[Path, Path, Path]:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "lighthouse.md").write_text(LAMP, encoding="utf-8")
    config = tmp_path / "config"
    shutil.copytree(config_dir(), config)
    queries = tmp_path / "queries.json"
    queries.write_text(json.dumps(QUERIES, indent=2), encoding="utf-8")
    return kb, config, queries


def _app(kb: Path, config: Path, queries: Path):
    app = make_app(Session.open([kb], config), queries_path=queries, kb_label="lighthouse")
    app.caller = Caller()
    return app


async def _eval_done(pilot, runs: int) -> EvalScreen:
    for _ in range(200):
        await settle(pilot)
        screen = pilot.app.screen
        if isinstance(screen, EvalScreen) and screen.runs >= runs and not screen.running:
            return screen
    raise AssertionError(f"eval run {runs} did not finish")


def _cells(screen: EvalScreen, column: str) -> list[str]:
    table = screen.query_one("#eval-table", DataTable)
    return [
        str(table.get_cell_at((row, [k for k, _ in table.columns.items()].index(column))))
        for row in range(table.row_count)
    ]


async def test_f4_runs_the_queries_and_an_edit_reload_marks_what_changed(workspace) -> None:
    kb, config, queries = workspace
    app = _app(kb, config, queries)
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.press("f4")
        screen = await _eval_done(pilot, 1)
        assert [row.id for row in screen.rows] == ["lens", "winding"]
        assert [row.passed for row in screen.rows] == [True, True]
        assert _cells(screen, "change") == ["", ""]
        # The author renames the lens unit: its label no longer exists, so the question fails.
        (kb / "lighthouse.md").write_text(LAMP.replace("chunk-000::unit-000", "chunk-000::unit-009"), encoding="utf-8")
        await pilot.press("ctrl+r")
        screen = await _eval_done(pilot, 2)
        assert [row.passed for row in screen.rows] == [False, True]
        assert screen.marks == {"lens": NEWLY_FAILING}
        assert _cells(screen, "change") == [NEWLY_FAILING, ""]
        assert "1 newly failing" in str(screen.query_one("#eval-title", Static).content)
        # Fixed again: the row says so.
        (kb / "lighthouse.md").write_text(LAMP, encoding="utf-8")
        await pilot.press("ctrl+r")
        screen = await _eval_done(pilot, 3)
        assert screen.marks == {"lens": NEWLY_PASSING}
        # `r` runs again on unchanged files: nothing is marked.
        await pilot.press("r")
        screen = await _eval_done(pilot, 4)
        assert screen.marks == {} and _cells(screen, "change") == ["", ""]
        # Enter on a row shows that question's run in the main screen.
        await pilot.press("down", "enter")
        await settle(pilot)
        assert not isinstance(app.screen, EvalScreen)
        assert app.current is not None and app.current.request.question == "How do I wind the clockwork?"
        assert app.main.query_one("#query").value == "How do I wind the clockwork?"


async def test_a_broken_queries_file_is_shown_not_raised(workspace) -> None:
    kb, config, queries = workspace
    queries.write_text("[{", encoding="utf-8")
    app = _app(kb, config, queries)
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.press("f4")
        screen = await _eval_done(pilot, 0)
        assert "INVALID_JSON" in str(screen.query_one("#eval-title", Static).content)


def test_changes_between_runs() -> None:
    def row(qid: str, passed: bool) -> QuestionRow:
        return QuestionRow(qid, "q", passed, "1/1", "—", {})

    assert changes(None, [row("a", True)]) == {}
    assert changes({"a": True, "b": False}, [row("a", False), row("b", True), row("c", True)]) == {
        "a": NEWLY_FAILING,
        "b": NEWLY_PASSING,
        "c": "new",
    }


async def test_a_broken_rules_file_at_start_shows_the_banner_and_f8_lists_it(workspace) -> None:
    kb, config, queries = workspace
    (config / "thinkingdb.json").write_text('{"rules": [', encoding="utf-8")
    app = _app(kb, config, queries)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        banner = app.main.query_one("#problems-banner", Static)
        assert banner.display
        assert "rules file invalid: running with 0 rules" in str(banner.content)
        assert "1 error" in str(app.main.query_one("#status", Static).content)
        await pilot.press("escape", "f8")
        assert isinstance(app.screen, TextModal)
        assert "thinkingdb.json:1:" in app.screen.plain and "INVALID_JSON" in app.screen.plain


async def test_a_clean_workspace_has_no_banner_and_zero_errors(workspace) -> None:
    app = _app(*workspace)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        assert not app.main.query_one("#problems-banner", Static).display
        assert "0 errors" in str(app.main.query_one("#status", Static).content)


def test_snapshot_banner_for_a_broken_rules_file(snap_compare, workspace, monkeypatch) -> None:
    kb, config, queries = workspace
    monkeypatch.chdir(queries.parent)  # the title shows the queries path: relative, the same every run
    (config / "thinkingdb.json").write_text('{"rules": [', encoding="utf-8")

    async def run_before(pilot):
        await settle(pilot)
        pilot.app.clear_notifications()  # the warm-up's "HDC index ready" toast comes when it comes
        await pilot.pause()

    assert snap_compare(_app(kb, config, queries), terminal_size=(150, 30), run_before=run_before)


def test_snapshot_eval_screen_after_a_change(snap_compare, workspace, monkeypatch) -> None:
    kb, config, queries = workspace
    monkeypatch.chdir(queries.parent)  # the title shows the queries path: relative, the same every run

    async def run_before(pilot):
        await pilot.press("f4")
        await _eval_done(pilot, 1)
        (kb / "lighthouse.md").write_text(LAMP.replace("chunk-000::unit-000", "chunk-000::unit-009"), encoding="utf-8")
        await pilot.press("ctrl+r")
        await _eval_done(pilot, 2)
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(_app(kb, config, queries), terminal_size=(150, 30), run_before=run_before)


async def test_a_reload_while_the_eval_screen_is_closed_is_marked_when_it_opens_again(workspace) -> None:
    kb, config, queries = workspace
    app = _app(kb, config, queries)
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.press("f4")
        screen = await _eval_done(pilot, 1)
        await pilot.press("escape")
        (kb / "lighthouse.md").write_text(LAMP.replace("chunk-000::unit-000", "chunk-000::unit-009"), encoding="utf-8")
        app.lifecycle.reload()
        await settle(pilot)
        await pilot.press("escape", "f4")
        screen = await _eval_done(pilot, 1)
        assert screen.marks == {"lens": NEWLY_FAILING}
        assert _cells(screen, "change") == [NEWLY_FAILING, ""]
        await pilot.press("escape", "f4")  # opened again on the same KB: the marks stay
        screen = await _eval_done(pilot, 1)
        assert screen.marks == {"lens": NEWLY_FAILING}


async def test_without_a_queries_file_f4_says_so_and_runs_no_other_kbs_questions(workspace) -> None:
    kb, config, _ = workspace
    app = make_app(Session.open([kb], config), queries_path=None, kb_label="lighthouse")
    async with app.run_test(size=(150, 30)) as pilot:
        await pilot.press("f4")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, EvalScreen) and screen.rows == [] and screen.runs == 0
        assert "no queries file" in str(screen.query_one("#eval-title", Static).content)


def test_the_explorer_reads_queries_json_beside_the_kb_and_names_none_when_there_is_none(workspace) -> None:
    import argparse

    from core.infra.resources import sample_queries_file
    from mrptui.commands.explore import queries_for

    kb, _, queries = workspace
    args = argparse.Namespace(queries=None)
    assert queries_for(args, []) == sample_queries_file()  # no --kb: the sample KB and its queries
    assert queries_for(args, [kb]) == queries  # beside the KB folder, as `mrptui init` writes it
    queries.unlink()
    assert queries_for(args, [kb]) is None
    beside = kb / "queries.json"
    beside.write_text(json.dumps(QUERIES), encoding="utf-8")
    assert queries_for(args, [kb]) == beside
    assert queries_for(args, [kb / "lighthouse.md"]) == beside  # a KB file: the queries beside it
    assert queries_for(argparse.Namespace(queries=str(beside)), []) == beside
