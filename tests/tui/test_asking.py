"""Pilot tests: asking a question, the query box, and a failing engine or session call."""

from __future__ import annotations

from helpers import QUESTION, ask, record_notifications, settle, text_of
from textual.widgets import Static

from mrptui.screens.help import HelpScreen
from mrptui.screens.main import MainScreen
from mrptui.screens.modals import ErrorModal
from mrptui.widgets.answer import CitationList
from mrptui.widgets.evidence import EvidenceTable
from mrptui.widgets.proofs import ProofTree
from mrptui.widgets.query import QueryBox
from mrptui.widgets.status import StatusLine
from mrptui.widgets.timeline import AttemptsTimeline

SIZE = (160, 45)


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
