"""Pilot tests: the evidence table, the breakdown, proofs, the answer and its citations, copying."""

from __future__ import annotations

import os
import re

import pytest
from conftest import make_app
from fake_kb import CALLER, SECRET, U_AIRFLOW, U_DAG, U_RETRY
from helpers import QUESTION, ask, record_notifications, select_timeline_row, settle, text_of
from shared_app import shared_app_of
from textual.widgets import Static

from mrptui.screens.evidence_detail import EvidenceDetailScreen
from mrptui.screens.main import MainScreen
from mrptui.screens.modals import TextModal, UnitModal
from mrptui.widgets.answer import AnswerPanel, CitationList
from mrptui.widgets.evidence import ROW_CAP, EvidenceTable
from mrptui.widgets.proofs import ProofTree
from mrptui.widgets.timeline import AttemptsTimeline

SIZE = (160, 45)
# Tests that open a screen or window on a fresh explorer, read it and close it share one (each
# leaves it as it started: tests/tui/shared_app.py).
shared_app = shared_app_of(SIZE)
on_the_shared_app = pytest.mark.asyncio(loop_scope="module")


def header_x(table: EvidenceTable, key: str) -> int:
    """The x offset of column `key`'s header cell inside the table's border."""
    x = 1  # the panel border
    for column, (_, width) in zip(table.columns_shown, table.drawn_columns, strict=True):
        if column.key == key:
            return x
        x += width + 2  # the cell padding each side
    raise AssertionError(f"no column {key}")


async def test_a_clicked_sort_holds_while_stepping_and_a_new_question_starts_in_rank_order(app):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        table = app.screen.query_one(EvidenceTable)
        for _ in range(2):  # the second click: lowest score first, the best row at the bottom
            assert await pilot.click(EvidenceTable, offset=(header_x(table, "score") + 1, 1))
            await pilot.pause()
        assert (table.sort_column, table.sort_reverse) == ("score", False) and table._shown[-1].rank == 1
        await pilot.press("3", "b", "n")  # stepping through the same run keeps the chosen order
        assert (table.sort_column, table.sort_reverse) == ("score", False)
        await ask(pilot, "what does airflow use?")
        assert (table.sort_column, table.sort_reverse) == ("rank", False)
        assert table._shown[0].rank == 1 and table._shown[0].kept and "by rank ↑" in table.border_subtitle


async def test_evidence_sort_keys_and_header_click(app):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        table = app.screen.query_one(EvidenceTable)
        await pilot.press("3")
        assert app.focused is table
        await pilot.press("o")  # rank → unit id, ascending
        assert table.sort_column == "id"
        assert [c.id for c in table._shown] == sorted(c.id for c in table._shown)
        await pilot.press("O")
        assert table.sort_reverse and [c.id for c in table._shown] == sorted((c.id for c in table._shown), reverse=True)
        x = header_x(table, "tdb")
        assert await pilot.click(EvidenceTable, offset=(x + 1, 1))  # the TDB header cell
        await pilot.pause()
        assert table.sort_column == "tdb" and table.sort_reverse  # numbers sort high first, missing last
        assert [c.tdb for c in table._shown] == [1.0, 1.0, 1.0, None]
        assert await pilot.click(EvidenceTable, offset=(x + 1, 1))
        await pilot.pause()
        assert table.sort_column == "tdb" and not table.sort_reverse
        assert "by tdb ↑" in table.border_subtitle


async def test_evidence_row_opens_the_breakdown_with_unit_text(app):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        await pilot.press("3", "down", "enter")
        assert isinstance(app.screen, EvidenceDetailScreen)
        assert app.screen.candidate.id == U_AIRFLOW
        scores = text_of(app.screen.query_one("#detail-scores", Static))
        assert "raw 0.749 → 0.159" in scores and "0.15 agreement" in scores
        assert "fused 1.159 = 1·0.159 + 0.85·1.000 + 0.15 agreement" in scores and "score = fused" in scores
        assert "raw 0.749 = sum 0.576 × role boost 1.3" in text_of(app.screen.query_one("#detail-boost", Static))
        assert "Airflow uses DAG scheduling." in text_of(app.screen.query_one("#detail-unit", Static))
        await pilot.press("c")
        assert app.clipboard == U_AIRFLOW
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_breakdown_shows_the_fusion_the_run_recorded_not_the_config_as_it_is_now(session):
    """The engine records how it fused (weights, bonus, the sum lane by lane) in the trace; the
    breakdown shows that, even when the session's config changed since the run."""
    from fake_scores import FAKE_RETRIEVAL

    from core.infra.config import FusionConfig, FusionMethod, Lane

    fusion = FusionConfig(
        method=FusionMethod.RRF, weights={Lane.BM25: 0.5, Lane.HDC: 0.7, Lane.TDB: 2.0}, agreement_bonus=0.25
    )
    session.retrieval = FAKE_RETRIEVAL.model_copy(update={"fusion": fusion})
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        await pilot.press("3", "down", "enter")
        scores = text_of(app.screen.query_one("#detail-scores", Static))
        assert "weighted · weights bm25 1, hdc 0.2, tdb 0.85, dense 0.5; agreement bonus 0.15" in scores
        assert "fused 1.159 = 1·0.159 + 0.85·1.000 + 0.15 agreement" in scores and "score = fused" in scores
        await pilot.press("escape", "down", "down", "enter")  # the last row: Luigi, cut by the gap
        scores = text_of(app.screen.query_one("#detail-scores", Static))
        assert "cut by gap: 0.199 < gapThreshold 0.25 × top 2.000 = 0.500" in scores


async def test_evidence_cycles_retrievals_and_caps_rows(app):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        table = app.screen.query_one(EvidenceTable)
        assert table.current.plugin == "kb-thinkingdb"
        await pilot.press("3", "v")
        assert table.current.plugin == "kb-fast" and table.row_count == 3
        await pilot.press("v")
        assert table.current.plugin == "kb-thinkingdb"
        await ask(pilot, "everything at once")
        assert table.row_count == ROW_CAP and table.total == 700
        assert "showing 500 of 700" in table.border_subtitle


async def test_proof_tree_expand_all_and_unit_leaf_opens_the_unit(app):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        tree = app.screen.query_one(ProofTree)
        await pilot.press("4")
        assert app.focused is tree
        await pilot.press("asterisk")
        await pilot.pause()
        leaves = []

        def walk(node):
            if isinstance(node.data, tuple) and node.data[0] == "unit":
                leaves.append(node)
            for child in node.children:
                walk(child)

        walk(tree.root)
        assert sorted(n.data[1] for n in leaves) == sorted([U_AIRFLOW, U_DAG, U_RETRY])
        tree.move_cursor(leaves[0])
        await pilot.pause()
        await pilot.press("c")
        assert app.clipboard == leaves[0].data[1]
        await pilot.press("enter")
        assert isinstance(app.screen, UnitModal)
        assert leaves[0].data[1] in app.screen.markup and "not visible" not in app.screen.markup
        calls = []
        app.open_in_editor = lambda file, line: calls.append((file, line))  # type: ignore[method-assign]
        await pilot.press("e")  # the unit window has the KB screen's `e`: its file at its line
        unit = app.session.unit(leaves[0].data[1], CALLER)
        assert calls == [(unit.location.file, unit.location.line)]
        await pilot.press("escape")
        await pilot.press("minus")
        assert not tree.root.children[0].is_expanded


@on_the_shared_app
async def test_a_unit_window_without_a_file_location_says_so_on_e(shared):
    pilot, app = shared, shared.app
    notes = record_notifications(app)
    app.navigator.open_unit(SECRET.id)  # not visible to this caller: no text, no location
    await pilot.pause()
    assert isinstance(app.screen, UnitModal)
    await pilot.press("e")
    assert notes == ["this unit has no file location here"] and isinstance(app.screen, UnitModal)


async def test_copy_proof_answer_and_timeline_row(app):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        await select_timeline_row(pilot, lambda r: r.plugin == "kb-fast")
        await pilot.press("c")
        assert app.clipboard == "kb kb-fast insufficient: 1 kept unit and no preferred role"
        await pilot.press("4")
        app.screen.query_one(ProofTree).move_cursor(app.screen.query_one(ProofTree).root.children[0])
        await pilot.pause()
        await pilot.press("c")
        assert app.clipboard.startswith("airflow relevant_for data pipelines (conf 0.855, path 0.700)")
        assert "⇐ tool_to_capability (weight 0.95)" in app.clipboard
        await pilot.press("5", "c")
        assert app.clipboard.startswith(f"# {QUESTION}") and f"1. `{U_AIRFLOW}`" in app.clipboard


async def test_citation_opens_the_unit_and_invisible_units_say_so(app):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        await pilot.press("5")
        assert isinstance(app.focused, CitationList)
        await pilot.press("enter")
        assert isinstance(app.screen, TextModal) and U_AIRFLOW in app.screen.markup
        await pilot.press("escape")
        app.navigator.open_unit(SECRET.id)
        await pilot.pause()
        assert "not visible to this caller" in app.screen.markup


async def test_answer_panel_status_when_no_context(app):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        app.whatif.rerun_with(pin=("kb", "kb-fast"))
        await settle(pilot)
        assert "no-context" in text_of(app.screen.query_one(AnswerPanel).query_one("#answer-text", Static))


async def test_answer_panel_shows_the_answer_type_lead_support_and_links(app):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, "which tool runs the nightly pipelines")
        markup = text_of(app.screen.query_one(AnswerPanel).query_one("#answer-text", Static))
        text = re.sub(r"\[/?(?:b|\$[\w-]+)?\]", "", markup)
        assert 'type: person or organisation, from "which tool"' in text
        assert "lead: Airflow" in text and "support: \u2713 passed" in text
        assert "link: runs \u2192 schedules" in text and "reference: It \u2192 Airflow" in text


async def test_mouse_clicks_select_rows_open_citations_and_units(app):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        timeline = app.screen.query_one(AttemptsTimeline)
        assert await pilot.click(AttemptsTimeline, offset=(5, 6))  # border, header, then row 4
        await pilot.pause()
        assert app.focused is timeline and timeline.selected.plugin == "kb-fast"
        citations = app.screen.query_one(CitationList)
        assert await pilot.click(CitationList, offset=(2, 0))
        await pilot.pause()
        assert isinstance(app.screen, TextModal) and U_AIRFLOW in app.screen.markup
        await pilot.press("escape")
        assert citations.has_focus
        tree = app.screen.query_one(ProofTree)
        tree.focus()
        await pilot.press("asterisk")
        await pilot.pause()
        leaf_line = next(
            i
            for i in range(tree.last_line + 1)
            if isinstance(tree.get_node_at_line(i).data, tuple) and tree.get_node_at_line(i).data[0] == "unit"
        )
        assert await pilot.click(ProofTree, offset=(16, leaf_line + 1))
        await pilot.pause()
        assert isinstance(app.screen, TextModal) and "unit-00" in app.screen.title_text


async def test_copy_inside_tmux_says_how_to_let_copies_through_until_set_clipboard_is_on(app, tmp_path, monkeypatch):
    """A real `tmux` program on PATH (a script answering show-options) decides the hint."""
    from mrptui.clipboard import TMUX_HINT, tmux_clipboard_setting

    tmux = tmp_path / "bin" / "tmux"
    tmux.parent.mkdir()
    setting = tmp_path / "setting"
    tmux.write_text(f"#!/bin/sh\ncat '{setting}'\n")
    tmux.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmux.parent}:{os.environ['PATH']}")
    monkeypatch.setenv("TMUX", "/tmp/tmux-1000/default,1,0")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        await pilot.press("5")
        notes = record_notifications(app)
        for value in ("external", "on"):
            setting.write_text(value + "\n")
            tmux_clipboard_setting.cache_clear()
            await pilot.press("c")
        monkeypatch.delenv("TMUX")
        await pilot.press("c")
    tmux_clipboard_setting.cache_clear()
    assert [TMUX_HINT in n for n in notes] == [True, False, False]
    assert all(n.startswith("copied: # ") for n in notes)  # the answer as Markdown


async def test_the_citations_are_refilled_when_the_answers_width_changes_not_its_height(app):
    """Textual reports a new answer's height as a resize of the panel: refilling the same
    citations then laid the screen out again and drew one more frame after each question."""
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        answer, citations = app.screen.query_one(AnswerPanel), app.screen.query_one(CitationList)
        first = citations.get_option_at_index(0)
        answer.on_resize()  # the same width
        assert citations.get_option_at_index(0) is first and not citations._layout_required
        await pilot.resize_terminal(SIZE[0] - 20, SIZE[1])
        await settle(pilot)
        assert citations.get_option_at_index(0) is not first
        assert citations.option_count == len(answer.state.answer.evidence_ids)
