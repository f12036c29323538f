"""Pilot tests: every binding that changes state, asserted on app and widget state."""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

import pytest
from conftest import make_app
from fakes import CALLER, SECRET, U_AIRFLOW, U_DAG, U_RETRY, FakeSession
from helpers import QUESTION, ask, record_notifications, select_timeline_row, settle, until
from shared_app import shared_app_of
from textual.content import Content
from textual.coordinate import Coordinate
from textual.widgets import DataTable, Input, OptionList, Static

from core.infra.diagnostics import Code, Diagnostic, Severity
from core.kernel.events import read_trace
from mrptui.breakpoints import Breakpoint
from mrptui.screens.diff import DiffScreen
from mrptui.screens.evidence_detail import EvidenceDetailScreen
from mrptui.screens.help import HelpScreen
from mrptui.screens.main import MainScreen
from mrptui.screens.modals import ErrorModal, PathModal, TextModal, UnitModal
from mrptui.widgets.answer import AnswerPanel, CitationList
from mrptui.widgets.evidence import ROW_CAP, EvidenceTable
from mrptui.widgets.plan import PlanPanel
from mrptui.widgets.proofs import ProofTree
from mrptui.widgets.query import QueryBox
from mrptui.widgets.status import StatusLine
from mrptui.widgets.timeline import AttemptsTimeline
from mrptui.widgets.virtual_table import VirtualTable

SIZE = (160, 45)
# Tests that open a screen or window on a fresh explorer, read it and close it share one (each
# leaves it as it started: tests/tui/shared_app.py).
shared_app = shared_app_of(SIZE)
on_the_shared_app = pytest.mark.asyncio(loop_scope="module")


def text_of(widget: Static) -> str:
    return str(widget.content)


def plain_of(widget: Static) -> str:
    """What the widget shows, without markup."""
    return Content.from_markup(str(widget.content)).plain


# -- asking and running ------------------------------------------------------------------------


async def test_query_box_is_focused_at_start_and_letters_type_into_it(app):
    async with app.run_test(size=SIZE) as pilot:
        assert app.focused is app.screen.query_one("#query")
        await pilot.press("r", "n", "b")
        assert app.screen.query_one("#query", QueryBox).value == "rnb"
        assert app.current is None  # `r` typed, it did not re-run


async def test_empty_question_notifies_and_does_not_run(app, session):
    async with app.run_test(size=SIZE) as pilot:
        notes = record_notifications(app)
        await pilot.press("space", "enter")
        await settle(pilot)
        assert "type a question first" in notes
        assert session.requests == [] and app.current is None


async def test_multi_line_question_new_line_keys_and_ctrl_s(app, session):
    async with app.run_test(size=SIZE) as pilot:
        box = app.screen.query_one("#query", QueryBox)
        single_height = box.region.height
        await pilot.press(*"which tools", "ctrl+j", *"for pipelines", "shift+enter", *"and")
        assert box.value == "which tools\nfor pipelines\nand"
        await pilot.press("enter", *"why?")  # more than one line: Enter starts a new line, no run
        await pilot.pause()
        assert box.value.count("\n") == 3 and session.requests == [] and app.current is None
        assert box.region.height == single_height + 3  # the box grows with its lines
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert session.requests[0].question == "which tools\nfor pipelines\nand\nwhy?"
        assert app.current.done and app.focused is box  # the box keeps focus


async def test_pasted_lines_are_kept_and_enter_runs_a_pasted_single_line(app, session):
    from textual.events import Paste

    async with app.run_test(size=SIZE) as pilot:
        box = app.screen.query_one("#query", QueryBox)
        app.post_message(
            Paste("  which tools  \rare relevant\r")
        )  # as the driver does; terminals paste line breaks as CR
        await pilot.pause()
        assert box.value.splitlines() == ["  which tools  ", "are relevant"]
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert session.requests[-1].question == "which tools\nare relevant"
        await pilot.press("slash")
        box.value = ""
        app.post_message(Paste(f"{QUESTION}\n"))  # one line plus a trailing newline: Enter still runs it
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot)
        assert session.requests[-1].question == QUESTION and len(session.requests) == 2


async def test_submit_runs_in_a_worker_fills_every_panel_and_f1_shows_help_for_the_focused_panel(app, session):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        run = app.current
        assert run is not None and run.done and app.cursor == len(run.events) == 27
        assert session.requests[0].question == QUESTION
        screen = app.screen
        assert isinstance(app.focused, AttemptsTimeline)  # focus leaves the box so keys step
        assert screen.query_one(AttemptsTimeline).row_count == 9
        assert screen.query_one(EvidenceTable).row_count == 4
        assert len(screen.query_one(ProofTree).root.children) == 1
        assert "grounded" in text_of(screen.query_one("#answer-text", Static))
        assert screen.query_one(CitationList).option_count == 3
        assert "event 27 of 27" in text_of(screen.query_one("#status", Static))
        assert "planner-default" in text_of(screen.query_one("#plan-body", Static))
        # F1 on the finished run (one app for both: the help only reads the focused panel).
        await pilot.press("3", "f1")
        assert isinstance(app.screen, HelpScreen)
        assert app.screen.text.startswith("## Evidence")
        groups = dict(app.screen.groups)
        assert ("o", "Sort by the next column") in groups["This panel"]
        assert any(key.startswith("n") for key, _ in groups["This screen"])
        await pilot.press("f1")
        assert isinstance(app.screen, MainScreen)


async def test_rerun_keys_repeat_the_last_request(app, session):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        await pilot.press("r")
        await settle(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
        await pilot.press("f5")
        await settle(pilot)
        assert [r.question for r in session.requests] == [QUESTION] * 4
        assert len(app.runs) == 4


async def test_engine_error_opens_one_error_modal_and_the_app_survives(app):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, "boom now")
        assert isinstance(app.screen, ErrorModal)
        assert "engine exploded on purpose" in app.screen.markup
        assert app.current.error.startswith("RuntimeError")
        assert len(app.current.events) == 3  # the events before the failure are kept
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)
        status = str(app.screen.query_one(StatusLine).render())
        assert "✗ failed" in status and "running" not in status
        await ask(pilot)
        assert app.current.final.status == "grounded"


# -- stepping ----------------------------------------------------------------------------------


async def test_step_back_and_forward_replays_without_running_again(app, session):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        total = len(app.current.events)
        await pilot.press("b", "b", "left")
        assert app.cursor == total - 3
        assert app.state.answer is None  # the answer arrives later in the stream
        await pilot.press("n", "right")
        assert app.cursor == total - 1
        assert len(session.requests) == 1
        status = text_of(app.screen.query_one("#status", Static))
        assert f"event {total - 1} of {total}" in status


async def test_home_and_end(app):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        await pilot.press("home")
        assert app.cursor == 0 and app.screen.query_one(AttemptsTimeline).row_count == 0
        await pilot.press("g")
        assert app.cursor == len(app.current.events)
        await pilot.press("home", "end")
        assert app.cursor == len(app.current.events)


async def test_continue_stops_at_each_backtrack(app):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        await pilot.press("home", "full_stop")
        assert app.state.last_event.kind == "backtracked" and app.state.backtracks[-1].level == 1
        assert app.control.paused_at == Breakpoint("backtrack")
        first = app.cursor
        await pilot.press("full_stop")
        assert app.cursor > first and app.state.last_event.kind == "backtracked"
        notes = record_notifications(app)
        await pilot.press("full_stop")
        assert app.cursor == len(app.current.events)
        assert any("no more backtracks" in n for n in notes)


async def test_next_stage_steps_stage_by_stage(app):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        await pilot.press("home", "right_square_bracket")
        assert app.state.last_event.kind == "plan_built"
        await pilot.press("right_square_bracket")
        assert app.state.last_event.kind == "stage_started" and app.state.current_stage == "sd"
        await pilot.press("right_square_bracket")
        assert app.state.current_stage == "kb"


async def test_plugin_breakpoint_holds_the_engine_before_the_call(app):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        await select_timeline_row(pilot, lambda r: r.plugin == "kb-thinkingdb")
        await pilot.press("t")
        assert app.breakpoints == {Breakpoint("plugin", "kb-thinkingdb")}
        await pilot.press("r")
        await settle(pilot)
        run = app.current
        assert not run.done and app.cursor == len(run.events)  # nothing after the held point was pulled
        assert app.state.last_event.kind == "attempt_started" and app.state.last_event.plugin == "kb-thinkingdb"
        status = text_of(app.screen.query_one("#status", Static))
        assert "held before kb-thinkingdb (stage kb, revision 1)" in status and "plugin kb-thinkingdb" in status
        timeline = app.screen.query_one(AttemptsTimeline)
        last = str(timeline.get_cell_at(Coordinate(timeline.row_count - 1, 0)))
        assert "●" in last and "⏸" in last
        await pilot.press("g")
        await settle(pilot)
        assert run.done and app.cursor == len(run.events)
        await select_timeline_row(pilot, lambda r: r.plugin == "kb-thinkingdb")
        await pilot.press("t")
        assert app.breakpoints == set()


async def test_stage_and_backtrack_breakpoints_from_the_timeline(app):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        await select_timeline_row(pilot, lambda r: r.stage == "gs")
        await pilot.press("T")
        await select_timeline_row(pilot, lambda r: r.kind == "backtrack")
        await pilot.press("t")
        assert app.breakpoints == {Breakpoint("stage", "gs"), Breakpoint("backtrack")}
        await pilot.press("r")
        await settle(pilot)
        assert app.state.last_event.kind == "backtracked"
        await pilot.press("full_stop", "full_stop")
        assert app.state.last_event.kind == "stage_started" and app.state.last_event.stage == "gs"


async def test_palette_commands_cover_bindings_and_plugins(app):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        commands = {title: callback for title, _, callback in app.palette_commands(app.screen)}
        for title in (
            "Step (n)",
            "Back (b)",
            "Continue (.)",
            "Save (s)",
            "Diff (d)",
            "Break on any backtrack: off",
            "Break on stage kb: off",
            "Break on plugin kb-fast: off",
            "Pin kb-balanced for kb",
            "Break before costly plugins: off",
            "Exclude kb-fast",
            "Toggle light/dark theme (ctrl+t)",
            "Sort (o)",
            "Undo the last change (ctrl+z)",
        ):
            assert title in commands, title
        commands["Break on stage kb: off"]()
        assert Breakpoint("stage", "kb") in app.breakpoints
        titles = [title for title, _, _ in app.palette_commands(app.screen)]
        assert "Break on stage kb: on" in titles and "Break on stage kb: off" not in titles
        commands["Pin kb-balanced for kb"]()
        await settle(pilot)
        assert app.current.request.pins == {"kb": "kb-balanced"}


async def test_palette_opens_and_runs_a_command(app):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        await pilot.press("ctrl+p")
        await pilot.press(*"break on any backtrack")
        # The palette shows its search's hits in batches: Enter runs whichever is highlighted then.
        await until(pilot, lambda: highlighted_command(app).lower().startswith("break on any backtrack"))
        await pilot.press("enter")
        await pilot.pause()
        assert Breakpoint("backtrack") in app.breakpoints


def highlighted_command(app) -> str:
    """The command the open palette would run on Enter ("" while its list is empty)."""
    from textual.command import CommandList

    listed = app.screen.query(CommandList)
    at = listed.first().highlighted if listed else None
    return "" if at is None else str(listed.first().get_option_at_index(at).hit.text)


# -- pin / exclude / diff ----------------------------------------------------------------------


async def test_pin_and_exclude_rerun_and_the_diff(app, session):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        await select_timeline_row(pilot, lambda r: r.plugin == "kb-fast")
        await pilot.press("p")
        await settle(pilot)
        assert session.requests[-1].pins == {"kb": "kb-fast"}
        assert app.current.final.status == "no-context"
        await select_timeline_row(pilot, lambda r: r.plugin == "kb-fast")
        await pilot.press("x")
        await settle(pilot)
        assert session.requests[-1].excluded == frozenset({"kb-fast"}) and session.requests[-1].pins == {}
        assert [b.level for b in app.current.final.backtracks] == [1]  # only the sd fallthrough is left
        await pilot.press("d")
        assert isinstance(app.screen, DiffScreen)
        assert app.screen.changes > 0
        assert any(row.right == "excluded: kb-fast" and row.changed for row in app.screen.diff.rows)
        await pilot.press("c")
        assert "+ excluded: kb-fast" in app.clipboard
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)


async def test_pin_needs_an_attempt_row(app, session):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        notes = record_notifications(app)
        await select_timeline_row(pilot, lambda r: r.kind == "plan")
        await pilot.press("p")
        assert any("select an attempt row" in n for n in notes)
        assert len(session.requests) == 1


async def test_diff_needs_two_runs(app):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        notes = record_notifications(app)
        await pilot.press("d")
        assert isinstance(app.screen, MainScreen)
        assert any("only one run" in n and "ask another question or re-run with r" in n for n in notes)


# -- evidence, proofs, answer --------------------------------------------------------------------


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
    from fakes import FAKE_RETRIEVAL

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


# -- save, replay, export ----------------------------------------------------------------------


async def test_save_trace_then_replay_it(app, tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        notes = record_notifications(app)
        await pilot.press("s")
        assert isinstance(app.screen, PathModal)
        saved = tmp_path / "exports" / "trace-run1.jsonl"  # the export folder ($MRPTUI_EXPORTS), made on first use
        assert app.screen.query_one(Input).value == str(saved)
        await pilot.press("enter")
        await pilot.pause()
        assert notes == [f"saved {len(app.current.events)} events to {saved}"]
        assert sorted(p.name for p in tmp_path.iterdir()) == ["exports"]  # nothing in the working directory
        await pilot.press("s")  # the next default never replaces the first file
        assert app.screen.query_one(Input).value == str(tmp_path / "exports" / "trace-run1-2.jsonl")
        await pilot.press("escape")
        events, problems = read_trace(saved)
        assert problems == [] and events == app.current.events
    replay = make_app(FakeSession(), replay=events)
    async with replay.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: replay.cursor == len(events))  # the replay is laid out after mounting
        assert replay.replay
        assert replay.screen.query_one("#query", QueryBox).value == QUESTION
        assert replay.screen.query_one(EvidenceTable).row_count == 4
        await pilot.press("escape", "home", "full_stop")  # the box has focus in replay too: leave it
        assert replay.state.last_event.kind == "backtracked"
        notes = record_notifications(replay)
        replay.runner.ask("another question")
        await pilot.press("r")  # re-running is not offered in replay: the key does nothing
        assert sum("replayed trace" in n for n in notes) == 1
        assert len(replay.runs) == 1


async def test_replay_shows_the_trace_caller_as_a_record_and_reads_the_kb_as_the_replayer(session):
    from fakes import thinkingdb_run

    from core.kernel.contract import Request
    from mrptui.screens.kb import KBScreen

    events = thinkingdb_run(Request(question=QUESTION, caller=CALLER))
    replay = make_app(session, replay=events, recorded_for="caller merchant:vip-ops as of 2026-01-15")
    async with replay.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("f2")
        await settle(pilot)
        assert isinstance(replay.screen, KBScreen)
        title = text_of(replay.screen.query_one("#kb-title", Static))
        assert "visible to the public caller as of 2026-01-15" in title
        assert "trace recorded for the caller merchant:vip-ops as of 2026-01-15" in title


async def test_replay_without_the_kb_lists_ids_and_says_why_there_is_no_text(session):
    from fakes import thinkingdb_run

    from core.kernel.contract import Request
    from mrptui.screens.kb import KBScreen
    from mrptui.screens.modals import NO_KB_TEXT
    from mrptui.screens.rules import NO_RULES_TEXT, RulesScreen
    from mrptui.session_seam import NullSession

    events = thinkingdb_run(Request(question=QUESTION, caller=CALLER))
    replay = make_app(NullSession(), replay=events)
    async with replay.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert replay.replay_without_kb
        await pilot.press("escape", "3", "enter")
        assert NO_KB_TEXT in text_of(replay.screen.query_one("#detail-unit", Static))
        await pilot.press("escape", "5", "enter")
        assert isinstance(replay.screen, TextModal) and NO_KB_TEXT in replay.screen.markup
        await pilot.press("escape", "k")
        await settle(pilot)
        screen = replay.screen
        assert isinstance(screen, KBScreen)
        assert screen.query_one("#kb-units", VirtualTable).row_count == 5  # every id the run names
        assert "the 5 unit ids it names" in text_of(screen.query_one("#kb-title", Static))
        assert text_of(screen.query_one("#kb-detail-text", Static)).count("unit text unavailable") == 1
        await pilot.press("c")
        assert replay.clipboard == screen.trace_ids[0][0]
        await pilot.press("R")
        await settle(pilot)
        assert isinstance(replay.screen, RulesScreen)
        assert replay.screen.query_one("#rules-table", DataTable).row_count == len(replay.screen.stats) > 0
        assert NO_RULES_TEXT in text_of(replay.screen.query_one("#rules-detail-text", Static))


async def test_save_can_be_cancelled(app, tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        await pilot.press("s", "escape")
        assert isinstance(app.screen, MainScreen) and list(tmp_path.iterdir()) == []


async def test_export_csv_and_markdown(app, tmp_path: Path):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        await pilot.press("e")
        app.screen.query_one(Input).value = str(tmp_path / "ev.csv")
        await pilot.press("enter")
        await pilot.press("m")
        app.screen.query_one(Input).value = str(tmp_path / "answer.md")
        await pilot.press("enter")
        await pilot.pause()
    csv_lines = (tmp_path / "ev.csv").read_text().splitlines()
    assert csv_lines[0].startswith("plugin,intent,rank,unit") and len(csv_lines) == 5
    markdown = (tmp_path / "answer.md").read_text()
    assert markdown.startswith(f"# {QUESTION}") and "**Status:** grounded" in markdown


async def test_save_and_export_refuse_a_folder_and_a_kb_file(app, session: FakeSession, tmp_path: Path):
    kb_file = tmp_path / "units.md"
    kb_file.write_text("## Context Unit keep::chunk-000::unit-000\n")
    session.kb_files.add(kb_file.resolve())
    (tmp_path / "folder").mkdir()
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        notes = record_notifications(app)
        for key, target in (("s", tmp_path / "folder"), ("m", kb_file), ("e", kb_file)):
            await pilot.press(key)
            app.screen.query_one(Input).value = str(target)
            await pilot.press("enter")
            await pilot.pause()
    assert notes == [
        f"not written: {tmp_path / 'folder'}: is a directory; choose a file path",
        f"not written: {kb_file}: is a KB or config file this session reads; choose another path",
        f"not written: {kb_file}: is a KB or config file this session reads; choose another path",
    ]
    assert kb_file.read_text() == "## Context Unit keep::chunk-000::unit-000\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "units.md"]
    assert list((tmp_path / "folder").iterdir()) == []


# -- KB screen ---------------------------------------------------------------------------------


@on_the_shared_app
async def test_kb_screen_lists_units_and_errors(shared):
    pilot, app = shared, shared.app
    await pilot.press("escape", "k")
    screen = app.screen
    assert type(screen).__name__ == "KBScreen"
    assert screen.query_one("#kb-units", VirtualTable).row_count == 6
    assert screen.query_one("#kb-diagnostics", OptionList).option_count == 2
    assert plain_of(screen.query_one("#kb-counts", Static)) == "2 errors"
    await pilot.press("escape", "f2")
    assert type(app.screen).__name__ == "KBScreen"


async def test_kb_header_pane_and_status_line_count_the_same_diagnostics():
    """A KB edited into errors also lists its withdrawn-units warning: every view counts both the
    same way, and at 80 columns the header keeps the counts (the title is cut instead)."""
    from fakes import DIAGNOSTICS

    withdrawn = Diagnostic(
        code=Code.UNITS_WITHDRAWN,
        message="units this file held before are withdrawn",
        file="sample_kb/tools.md",
        severity=Severity.WARNING,
    )
    app = make_app(
        FakeSession(diagnostics=[*DIAGNOSTICS, withdrawn]), kb_label="/a/rather/long/path/to/the/knowledge/base/folder"
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("escape", "k")
        await settle(pilot)
        screen = app.screen
        assert plain_of(screen.query_one("#kb-counts", Static)) == "2 errors, 1 warning"
        assert screen.query_one("#kb-diagnostics", OptionList).border_title == "Validation: 2 errors, 1 warning"
        assert (app.kb.health.errors, app.kb.health.warnings) == (2, 1)
        counts = screen.query_one("#kb-counts", Static).region
        assert counts.right <= 80 and counts.width >= len("2 errors, 1 warning")


@on_the_shared_app
async def test_kb_search_next_previous_and_filter(shared):
    pilot, app = shared, shared.app
    await pilot.press("escape", "k", "s")
    screen = app.screen
    await pilot.press(*"airflow", "enter")
    assert screen.unit_search.matches == [1, 2]  # the comparison unit and the Airflow unit
    table = screen.query_one("#kb-units", VirtualTable)
    assert table.cursor_row == 1
    await pilot.press("n")
    assert table.cursor_row == 2
    await pilot.press("n")
    assert table.cursor_row == 1
    await pilot.press("N")
    assert table.cursor_row == 2
    await pilot.press("f")
    assert screen.unit_search.filtered and table.row_count == 2
    await pilot.press("f")
    assert table.row_count == 6


async def test_why_not_uses_the_last_question(app, session):
    async with app.run_test(size=SIZE) as pilot:
        notes = record_notifications(app)
        await pilot.press("escape", "k", "w")
        assert any("ask a question first" in n for n in notes)
        await pilot.press("escape")
        await ask(pilot)
        await pilot.press("k", "down", "w")
        assert isinstance(app.screen, TextModal)
        assert session.why_not_calls == [("ops::chunk-002::unit-001", QUESTION)]
        assert "cut by gap: 0.21 < 0.35 × top 0.80" in app.screen.markup


@on_the_shared_app
async def test_edit_opens_the_editor_at_the_line(shared):
    pilot, app = shared, shared.app
    calls = []
    notes = record_notifications(app)
    await pilot.press("escape", "k", "e")  # $EDITOR is unset in tests
    assert any("set $EDITOR" in n for n in notes)
    app.open_in_editor = lambda file, line: calls.append((file, line))  # type: ignore[method-assign]
    await pilot.press("down", "e")
    await pilot.press("tab", "e")  # the validation errors table
    assert calls == [("sample_kb/ops.md", 12), ("config/thinkingdb.json", 41)]


async def test_file_change_reloads_and_shows_new_errors(app, session):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        notes = record_notifications(app)
        await pilot.press("k")
        app.lifecycle.poll()  # nothing changed
        await settle(pilot)
        assert session.reloads == 0
        new_error = Diagnostic(
            code=Code.MALFORMED_LINE, message="line is not Field: value", file="sample_kb/new.md", line=2
        )
        session.touch(diagnostics=[new_error])
        app.lifecycle.poll()
        await settle(pilot)
        assert session.reloads == 1 and app.kb_generation == 1
        # On the KB screen `r` would start a question: the hint names keys that re-run from here.
        assert any("1 KB error;" in n and "press / then F5 to re-run" in n for n in notes)
        listing = app.screen.query_one("#kb-diagnostics", OptionList)
        assert listing.option_count == 1 and "sample_kb/new.md:2:1" in str(listing.get_option_at_index(0).prompt)
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert session.reloads == 2


# -- rules screen ------------------------------------------------------------------------------


async def test_rules_screen_shows_last_run_statistics(app):
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("escape", "R")
        screen = app.screen
        assert "no ThinkingDB retrieval" in text_of(screen.query_one("#rules-title", Static))
        await pilot.press("escape")
        await ask(pilot)
        await pilot.press("f3")
        screen = app.screen
        assert "2 fired, 2 never fired" in text_of(screen.query_one("#rules-title", Static))
        assert "RULE_UNKNOWN_RELATION" in text_of(screen.query_one("#rules-errors", Static))
        detail = text_of(screen.query_one("#rules-detail-text", Static))
        assert "fired 1×" in detail and "?x=airflow" in detail
        await pilot.press("down", "down")
        detail = text_of(screen.query_one("#rules-detail-text", Static))
        assert "never fired" in detail and "first unmatched premise: 2. ?y depends_on ?z" in detail
        await pilot.press("c")
        assert app.clipboard.startswith("dependency_transitive: ?x depends_on ?y, ?y depends_on ?z ⇒")
        await pilot.press("k")
        assert [type(s).__name__ for s in app.screen_stack] == ["MainScreen", "RulesScreen", "KBScreen"]


async def test_rules_screen_counts_a_kept_rule_as_a_warning_not_an_error():
    from fakes import DIAGNOSTICS

    kept = Diagnostic(
        code=Code.RULES_LAST_GOOD_KEPT,
        message="rule r7: invalid edit, last good version kept",
        file="config/thinkingdb.json",
        line=30,
        severity=Severity.WARNING,
    )
    app = make_app(FakeSession(diagnostics=[*DIAGNOSTICS, kept]))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("escape", "R")
        screen = app.screen
        assert plain_of(screen.query_one("#rules-counts", Static)) == "rule file: 1 error, 1 warning"
        lines = plain_of(screen.query_one("#rules-errors", Static)).splitlines()
        assert [line[0] for line in lines] == ["✗", "⚠"] and "last good version kept" in lines[1]


@on_the_shared_app
async def test_escape_goes_back_to_the_screen_a_screen_was_opened_from(shared):
    """KB → rules → Esc is the KB screen again; switching back and forth never grows the stack."""

    def stack() -> list[str]:
        return [type(s).__name__ for s in app.screen_stack]

    pilot, app = shared, shared.app
    await pilot.press("escape", "k", "R")
    assert stack() == ["MainScreen", "KBScreen", "RulesScreen"]
    await pilot.press("escape")
    assert stack() == ["MainScreen", "KBScreen"]
    await pilot.press("f3", "f2", "R", "k")  # back and forth: back to the KB screen below
    assert stack() == ["MainScreen", "KBScreen"]
    await pilot.press("escape")
    assert stack() == ["MainScreen"]
    await pilot.press("R", "k", "q")
    assert stack() == ["MainScreen", "RulesScreen"]


# -- help, theme, layout, quit -----------------------------------------------------------------


async def test_narrow_terminal_shows_one_panel_at_a_time(app):
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert screen.has_class("-narrow")
        await ask(pilot)
        assert screen.query_one(AttemptsTimeline).display and screen.query_one(AttemptsTimeline).region.height > 5
        assert screen.query_one(EvidenceTable).region.height == 0
        await pilot.press("3")
        assert screen.query_one(EvidenceTable).region.height > 5
        assert screen.query_one(AttemptsTimeline).region.height == 0
        await pilot.click("#tab-plan")
        await pilot.pause()
        assert screen.query_one(PlanPanel).region.height > 5
        await pilot.resize_terminal(200, 50)
        await pilot.pause()
        assert not screen.has_class("-narrow")
        assert all(
            screen.query_one(f"#{key}").region.height > 5
            for key in ("plan", "attempts", "evidence", "proofs", "answer")
        )


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


async def test_theme_toggle_then_ctrl_q_quits_from_a_modal(app):
    async with app.run_test(size=SIZE) as pilot:
        assert app.theme == "textual-dark"
        await pilot.press("ctrl+t")
        assert app.theme == "textual-light"
        await pilot.press("ctrl+t")
        assert app.theme == "textual-dark"
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert app.return_code == 0


async def test_a_failing_session_call_opens_the_error_modal(app, session, monkeypatch):
    def broken(*args):
        raise OSError("disk gone")

    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        monkeypatch.setattr(session, "unit", broken)
        await pilot.press("5", "enter")
        assert isinstance(app.screen, ErrorModal) and "disk gone" in app.screen.markup
        await pilot.press("escape")
        monkeypatch.setattr(session, "units", broken)
        await pilot.press("k")
        await pilot.pause()
        assert isinstance(app.screen, ErrorModal)
        await pilot.press("escape")
        assert type(app.screen).__name__ == "KBScreen"


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


# -- user keymap -----------------------------------------------------------------------------------


async def test_user_keymap_remaps_bindings_by_id(session, tmp_path):
    keymap = tmp_path / "keymap.json"
    keymap.write_text('{"main.step": "j", "main.back": ["k", "ctrl+b"], "query.submit": "ctrl+g"}')
    app = make_app(session, keymap_path=keymap)
    async with app.run_test(size=SIZE) as pilot:
        notes = record_notifications(app)
        box = app.screen.query_one("#query", QueryBox)
        box.value = "which tools\nare relevant"
        await pilot.press("ctrl+s")  # the default submit key is gone
        await pilot.pause()
        assert app.current is None
        await pilot.press("ctrl+g")
        await settle(pilot)
        assert session.requests[-1].question == "which tools\nare relevant"
        await pilot.press("escape", "home", "j", "j")  # the box keeps focus after a run: leave it
        assert app.cursor == 2
        await pilot.press("n")  # replaced, not added to
        assert app.cursor == 2
        await pilot.press("ctrl+b")
        assert app.cursor == 1
        titles = [title for title, _, _ in app.palette_commands(app.screen)]
        assert "Step (j)" in titles and "Back (k)" in titles
        assert notes == [] or not any("Keymap" in n or "keymap" in n for n in notes)


async def test_a_bad_keymap_file_is_a_notification_naming_it(session, tmp_path):
    broken = tmp_path / "keymap.json"
    broken.write_text('{"main.step": "j",\n  "main.back": }\n')
    app = make_app(session, keymap_path=broken)
    notes = record_notifications(app)
    async with app.run_test(size=SIZE) as pilot:
        assert len(notes) == 1 and f"{broken}:2:" in notes[0] and "kept the default keys" in notes[0]
        await ask(pilot)
        await pilot.press("home", "n")
        assert app.cursor == 1  # defaults in force


async def test_keymap_entries_with_unknown_ids_or_keys_are_skipped_and_named(session, tmp_path):
    keymap = tmp_path / "keymap.json"
    keymap.write_text('{"main.stepp": "j", "main.back": "ctrl+bb", "main.continue": "ctrl+o"}')
    app = make_app(session, keymap_path=keymap)
    notes = record_notifications(app)
    async with app.run_test(size=SIZE):
        assert len(notes) == 1
        assert "unknown binding id 'main.stepp'" in notes[0] and "main.back: unknown key 'ctrl+bb'" in notes[0]
        assert "ignored those entries" in notes[0]
        assert app._keymap == {"main.continue": "ctrl+o"}
    wrong_type = tmp_path / "types.json"
    wrong_type.write_text('{"main.step": 5}')
    app = make_app(session, keymap_path=wrong_type)
    notes = record_notifications(app)
    async with app.run_test(size=SIZE):
        assert len(notes) == 1 and str(wrong_type) in notes[0] and "main.step" in notes[0]


def test_docs_list_every_binding_id():
    from mrptui.keymap import binding_ids

    docs = (Path(__file__).resolve().parents[2] / "docs" / "tui.md").read_text(encoding="utf-8")
    missing = [binding_id for binding_id in binding_ids() if f"`{binding_id}`" not in docs]
    assert missing == []


@pytest.mark.paints  # the key bar's spans are laid out as it draws
async def test_key_bar_shows_the_focused_keys_and_runs_a_clicked_one(app):
    from mrptui.widgets.keybar import KeyBar

    async with app.run_test(size=SIZE) as pilot:
        bar = app.screen.query_one(KeyBar)
        assert bar.keys[:3] == ["^u", "^s", "^j"]  # the question box is focused: clear, run, new line
        await ask(pilot)
        await pilot.pause()
        assert bar.keys[:2] == ["t", "T"] and "^p" not in bar.keys  # the timeline's keys; the palette sits right
        start = next(start for start, _, binding in bar._spans if binding.action == "step_back")
        before = app.cursor
        assert await pilot.click(KeyBar, offset=(start + 1, 0))
        await pilot.pause()
        assert app.cursor == before - 1
        await pilot.hover(KeyBar, offset=(start + 1, 0))
        assert bar.tooltip == "Step one event back (left arrow too)"


async def test_timeline_rows_show_their_whole_reason_on_hover_and_enter(app):
    async with app.run_test(size=(110, 30)) as pilot:  # a narrow timeline: reasons are cut
        await ask(pilot, "compare airflow and luigi")
        await pilot.press("2")
        await select_timeline_row(pilot, lambda row: row.kind == "backtrack" and row.level == 2)
        timeline = app.screen.query_one(AttemptsTimeline)
        reason = "val-grounded rejected the answer (no Comparison unit cited); planner-depth replans"
        await pilot.press("enter")
        assert isinstance(app.screen, TextModal) and reason in app.screen.markup
        assert "⟲ L2 replan after val-grounded r1 (stage val)" in app.screen.markup
        await pilot.press("escape")
        row = timeline.cursor_row
        assert await pilot.hover(AttemptsTimeline, offset=(10, row + 2 - timeline.scroll_offset.y))
        await pilot.pause()
        assert reason in str(timeline.tooltip)


async def test_the_session_is_warmed_up_for_the_caller_after_mount(session) -> None:
    app = make_app(session)
    async with app.run_test(size=(160, 45)) as pilot:
        await until(pilot, lambda: session.warmed)
        await app.workers.wait_for_complete()
        assert session.warmed == [app.caller]


class SlowHdcSession(FakeSession):
    """HDC not built yet; building it waits until the test lets it finish."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.hdc_built = False

    def hdc_ready(self, caller) -> bool:
        return self.hdc_built

    def warm_up_hdc(self, caller) -> None:
        assert self.release.wait(10)
        self.hdc_built = True


async def test_hdc_builds_after_first_paint_and_the_status_line_says_when_it_is_ready() -> None:
    session = SlowHdcSession()
    now = [0.0]
    app = make_app(session, clock=lambda: now[0])
    notes = record_notifications(app)
    async with app.run_test(size=(160, 45)) as pilot:
        # The worker waits in warm_up_hdc until released, so this state lasts; allow a slow machine.
        for _ in range(500):
            await pilot.pause(0.02)
            if app.kb_state.hdc == "building" and "HDC" in text_of(app.screen.query_one("#status", Static)):
                break
        assert "HDC index building…" in text_of(app.screen.query_one("#status", Static))
        now[0] = 2.5  # the build took 2.5 s: long enough to say it is ready
        session.release.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert session.hdc_built and app.kb_state.hdc != "building"
        assert "HDC" not in text_of(app.screen.query_one("#status", Static))
        assert "HDC index ready (2.5 s)" in notes


class RebuildingHdcSession(FakeSession):
    """HDC ready, until a reload makes a new view whose HDC index is built on request."""

    def __init__(self) -> None:
        super().__init__()
        self.hdc_built = True
        self.hdc_builds = 0
        self.release = threading.Event()

    def hdc_ready(self, caller) -> bool:
        return self.hdc_built

    def reload(self):
        self.hdc_built = False
        return super().reload()

    def warm_up_hdc(self, caller) -> None:
        assert self.release.wait(10)
        self.hdc_builds += 1
        self.hdc_built = True


async def test_a_reload_rebuilds_the_hdc_index_in_the_background_without_a_toast() -> None:
    session = RebuildingHdcSession()
    app = make_app(session)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        notes = record_notifications(app)
        session.touch()
        app.lifecycle.poll()
        for _ in range(500):  # the rebuild waits in warm_up_hdc until released
            await pilot.pause(0.02)
            if app.kb_state.hdc == "building":
                break
        assert "HDC index building…" in text_of(app.screen.query_one("#status", Static))
        # A question meanwhile runs to its answer while the rebuild is still held.
        query = app.screen.query_one("#query")
        query.focus()
        query.value = QUESTION  # type: ignore[attr-defined]
        await pilot.press("enter")
        for _ in range(500):
            await pilot.pause(0.02)
            if app.current is not None and app.current.done:
                break
        assert app.current is not None and app.current.done and session.hdc_builds == 0
        session.release.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert session.hdc_builds == 1 and app.kb_state.hdc != "building"
        assert "HDC" not in text_of(app.screen.query_one("#status", Static))
        assert not any("HDC" in note for note in notes)


class PerViewHdcSession(FakeSession):
    """HDC indexes per view version, as the engine keeps them: a reload makes a new view."""

    def __init__(self) -> None:
        super().__init__()
        self.view_version = 0
        self.built: set[int] = set()
        self.release = threading.Event()

    def hdc_ready(self, caller) -> bool:
        return self.view_version in self.built

    def reload(self):
        self.view_version += 1
        return super().reload()

    def warm_up_hdc(self, caller) -> None:
        version = self.view_version
        assert self.release.wait(10)
        self.built.add(version)


async def test_a_reload_during_the_first_hdc_build_leaves_no_building_status_behind() -> None:
    session = PerViewHdcSession()
    app = make_app(session)
    async with app.run_test(size=(160, 45)) as pilot:
        for _ in range(500):  # the first build waits in warm_up_hdc until released
            await pilot.pause(0.02)
            if app.kb_state.hdc == "building":
                break
        session.touch()
        app.lifecycle.poll()
        await until(pilot, lambda: session.reloads and all(w.name != "reload" or w.is_finished for w in app.workers))
        await pilot.pause()  # the app takes in the reload: the new view's HDC build starts, held
        session.release.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert session.reloads == 1 and session.hdc_ready(CALLER)  # the new view's index was built
        assert app.kb_state.hdc != "building" and "HDC" not in text_of(app.screen.query_one("#status", Static))


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


async def test_proof_labels_and_table_headers_that_do_not_fit_end_in_an_ellipsis(app):
    async with app.run_test(size=(120, 40)) as pilot:
        await ask(pilot)
        tree = app.screen.query_one(ProofTree)
        await pilot.press("4", "asterisk")
        await pilot.pause()
        room = tree.scrollable_content_region.width
        framed = [strip.text for strip in tree.render_lines(tree.region.reset_offset)]
        lines = [line[1:-1].rstrip() for line in framed[1:-1]]  # inside the pane's frame
        cut = [line for line in lines if line.endswith("…")]
        assert cut, "a 120-column proofs pane cuts the sample's longer facts"
        assert all(len(line) <= room for line in lines)
        # The tree scrolls no further than the pane: the cut label is what there is to see.
        assert tree.virtual_size.width <= room
        timeline = app.screen.query_one(AttemptsTimeline)
        for column in timeline.columns.values():
            if column.width < len(str(column.label)) and len(column.label) > 1:
                assert str(column.label).endswith("…")


def test_a_unit_row_keeps_the_file_name_and_line_when_its_place_is_cut():
    from core.units import KnowledgeUnit
    from mrptui.screens.kb_columns import unit_cells

    unit = KnowledgeUnit.model_validate(
        {
            "id": "u1",
            "source_id": "s",
            "role": "Definition",
            "chunk_id": "c",
            "topic": "t",
            "claim": "x",
            "location": {"file": "/very/long/folder/of/the/kb/howto/deploy.md", "line": 128},
        }
    )
    where = unit_cells(unit, False, True, None, where_width=16)[-1].plain
    assert where == "…o/deploy.md:128" and len(where) == 16
    assert unit_cells(unit, False, True, None)[-1].plain.endswith("/howto/deploy.md:128")


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
