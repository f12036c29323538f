"""Pilot tests: stepping through a run, breakpoints, and the attempts timeline."""

from __future__ import annotations

from helpers import ask, record_notifications, select_timeline_row, settle, text_of
from textual.coordinate import Coordinate
from textual.widgets import Static

from mrptui.breakpoints import Breakpoint
from mrptui.screens.modals import TextModal
from mrptui.widgets.timeline import AttemptsTimeline

SIZE = (160, 45)


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
