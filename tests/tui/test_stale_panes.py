"""A run's start does not blank the panes: each keeps the previous question, marked stale in its
title, until the new run has its own content for it (issue 41: two near full-screen frames a
question). Held, cancelled or stepped through, a run shows its own state."""

from __future__ import annotations

import threading

import pytest
from conftest import make_app
from fake_runs import thinkingdb_run
from fakes import FakeSession
from helpers import ask, record_notifications, settle, spy_calls, until
from rich.style import Style
from textual.app import App, ComposeResult
from textual.color import Color
from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import Static

from core.kernel.contract import Request
from core.kernel.events import AnswerReady, ProofsFound, RetrievalScored
from mrptui.screens.modals import PathModal
from mrptui.state import ViewState, reduce, stale_panes
from mrptui.widgets.stale_mark import STALE_LABEL, is_stale, mark_stale

PANES = ("plan", "attempts", "evidence", "proofs", "answer")
FINDINGS = ("evidence", "proofs", "answer")


class GatedSession(FakeSession):
    """Once `gated`, a run waits before its first retrieval and again before its proofs and answer,
    until the test opens each gate."""

    def __init__(self) -> None:
        super().__init__()
        self.gated = False
        self.retrieval_gate, self.answer_gate = threading.Event(), threading.Event()

    def run(self, request, steering=None):
        gates = {RetrievalScored: self.retrieval_gate, ProofsFound: self.answer_gate, AnswerReady: self.answer_gate}
        for event in super().run(request, steering):
            gate = gates.pop(type(event), None) if self.gated else None
            if gate is not None:
                assert gate.wait(10), "the test never opened the gate"
            yield event


def _pane(app, name: str) -> Widget:
    return app.main.query_one(f"#{name}")


def _stale(app) -> set[str]:
    """The panes marked stale, each checked to say so in its title too."""
    titled = {name for name in PANES if str(_pane(app, name).border_title).endswith(STALE_LABEL)}
    styled = {name for name in PANES if _pane(app, name).styles.border_title_style.italic}
    assert titled == styled, (titled, styled)
    return titled


async def test_a_new_run_keeps_the_previous_panes_marked_stale_until_its_own_rows_arrive() -> None:
    session = GatedSession()
    app = make_app(session, batch_size=1)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        await ask(pilot)
        evidence = _pane(app, "evidence")
        first_rows = evidence.row_count
        assert first_rows and not _stale(app)

        session.gated = True
        await pilot.press("ctrl+r")
        await until(pilot, lambda: app.current is not None and app.current.run_id == 2 and app.control.is_live)
        # Held before its first retrieval: what it found so far is nothing, the previous run stays.
        await until(pilot, lambda: app.current.final.plan is not None and "plan" not in _stale(app))
        assert set(FINDINGS) <= _stale(app)
        assert evidence.row_count == first_rows  # not blanked
        notes = record_notifications(app)
        await pilot.press("e")  # the CSV export: the rows shown are not this run's
        assert "no evidence to export yet" in notes and not isinstance(app.screen, PathModal)

        session.retrieval_gate.set()
        await until(pilot, lambda: "evidence" not in _stale(app))
        assert app.control.state.retrievals and evidence.run == 2
        assert {"proofs", "answer"} <= _stale(app)  # their own content is still to come

        session.answer_gate.set()
        await settle(pilot)
        assert app.current.done and not _stale(app)
        assert "previous question" not in str(evidence.border_title)


async def _second_run_held_before_retrieval(session: GatedSession, pilot) -> None:
    """A first question answered, then a re-run waiting at its first retrieval, panes stale."""
    app = pilot.app
    await settle(pilot)
    await ask(pilot)
    session.gated = True
    await pilot.press("ctrl+r")
    await until(pilot, lambda: "evidence" in _stale(app))


async def test_a_cancelled_start_shows_its_own_empty_panes_not_the_previous_run() -> None:
    session = GatedSession()
    app = make_app(session, batch_size=1)
    async with app.run_test(size=(160, 45)) as pilot:
        await _second_run_held_before_retrieval(session, pilot)
        await pilot.press("escape")
        session.retrieval_gate.set()
        session.answer_gate.set()
        await settle(pilot)
        assert app.current is not None and app.current.done and not _stale(app)
        assert _pane(app, "evidence").run == app.current.run_id


async def test_stepping_back_in_a_live_run_shows_that_run_not_the_previous_one() -> None:
    session = GatedSession()
    app = make_app(session, batch_size=1)
    async with app.run_test(size=(160, 45)) as pilot:
        await _second_run_held_before_retrieval(session, pilot)
        await pilot.press("home")  # the cursor leaves the run's end: the user reads this run
        await until(pilot, lambda: not _stale(app))
        assert _pane(app, "evidence").run == app.current.run_id
        session.retrieval_gate.set()
        session.answer_gate.set()
        await settle(pilot)


def test_only_the_panes_the_new_run_has_nothing_for_are_stale() -> None:
    before = ViewState(status="done")
    script = thinkingdb_run(Request(question="which tools"))
    assert stale_panes(reduce(script[:1]), None) == frozenset()
    assert stale_panes(reduce(script[:1]), before) == frozenset(PANES)
    first_retrieval = next(i for i, e in enumerate(script) if isinstance(e, RetrievalScored))
    assert stale_panes(reduce(script[: first_retrieval + 1]), before) == {"proofs", "answer"}
    assert stale_panes(reduce(script), before) == frozenset()


class _PaneApp(App[None]):
    CSS = ".panel { border: round $panel-lighten-2; border-title-color: $text-muted; border-title-style: bold; }"

    def compose(self) -> ComposeResult:
        pane = Static("content", classes="panel")
        pane.border_title = "Evidence"
        yield pane


def _title_style(pane: Widget, text: str) -> Style:
    """The style the pane's top border draws `text` of its title with."""
    top = pane.render_lines(Region(0, 0, pane.size.width, 1))[0]
    return next(segment.style for segment in top if text in segment.text)


async def test_the_stale_mark_draws_the_title_in_the_themes_muted_warning_and_comes_off_without_a_trace() -> None:
    app = _PaneApp()
    async with app.run_test(size=(60, 8)) as pilot:
        pane = app.query_one(Static)
        await pilot.pause()
        before = (list(pane.render_lines(Region(0, 0, *pane.size))), _title_style(pane, "Evidence"))
        mark_stale(pane, True)
        await pilot.pause()
        style = _title_style(pane, "previous question")
        warning = Color.parse(app.get_css_variables()["warning-muted"]).rich_color
        assert str(pane.border_title).endswith(STALE_LABEL) and is_stale(pane)
        assert (style.color, style.italic, bool(style.bold)) == (warning, True, False)
        mark_stale(pane, False)
        await pilot.pause()
        assert not is_stale(pane) and pane.border_title == "Evidence"
        assert (list(pane.render_lines(Region(0, 0, *pane.size))), _title_style(pane, "Evidence")) == before


@pytest.mark.paints  # the lines a paint redraws are what it counts
async def test_marking_a_pane_stale_repaints_its_title_line_only() -> None:
    """The mark changes the top border line: the pane's content lines are not drawn again (a full
    repaint of five panes made each run's start a near full-screen frame)."""
    app = _PaneApp()
    async with app.run_test(size=(60, 8)) as pilot:
        pane = app.query_one(Static)
        await pilot.pause()
        drawn = spy_calls(pane, "render_line")
        for stale in (True, False):
            mark_stale(pane, stale)
            await pilot.pause()
            top = "".join(segment.text for segment in app.screen._compositor.render_strips()[0])
            assert (STALE_LABEL.strip() in top) == stale, top
            assert drawn == [], drawn
        mark_stale(pane, False)  # unchanged: nothing to repaint
        assert not pane._repaint_regions
