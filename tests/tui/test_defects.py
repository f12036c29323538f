"""Defects from issue 25, each with the test that failed before its fix."""

from __future__ import annotations

from conftest import make_app
from fakes import FakeSession
from helpers import record_notifications, settle, until
from textual.widgets import Static

from mrptui.kb_state import KBState
from mrptui.state import ViewState
from mrptui.widgets.status import status_markup


def plain(markup: str) -> str:
    from textual.content import Content

    return Content.from_markup(markup).plain


def test_the_status_line_before_any_run_says_ready_once() -> None:
    line = plain(
        status_markup(
            ViewState(), 0, live=False, paused_at=None, breakpoints=(), replay=False, label="sample_kb", kb=KBState()
        )
    )
    assert line == "ready · sample_kb"


def test_a_replay_status_line_says_replay_once() -> None:
    line = plain(
        status_markup(
            ViewState(), 0, live=False, paused_at=None, breakpoints=(), replay=True, label="replay trace.jsonl"
        )
    )
    assert line.count("replay") == 1 and line.endswith("replay trace.jsonl")


class QuickHdcSession(FakeSession):
    def __init__(self) -> None:
        super().__init__()
        self.hdc_built = False

    def hdc_ready(self, caller) -> bool:
        return self.hdc_built

    def warm_up_hdc(self, caller) -> None:
        self.hdc_built = True


async def test_no_hdc_ready_toast_when_the_index_was_built_at_once() -> None:
    session = QuickHdcSession()
    app = make_app(session)
    notes = record_notifications(app)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert session.hdc_built and app.kb_state.hdc != "building"
        assert not any("HDC" in note for note in notes), notes
        assert "ready" in str(app.main.query_one("#status", Static).content)


async def test_a_long_status_line_wraps_at_100_columns_instead_of_cutting_its_end() -> None:
    from fake_kb import CALLER
    from fake_runs import thinkingdb_run

    from core.kernel.contract import Request
    from mrptui.session_seam import NullSession

    label = "replay a-long-trace-name.jsonl · recorded for the caller merchant:vip-ops in EU as of 2026-01-15"
    app = make_app(
        NullSession(),
        replay=thinkingdb_run(Request(question="q", caller=CALLER)),
        kb_label=label,
        break_before_costly=True,
    )
    async with app.run_test(size=(100, 30)) as pilot:
        status = app.main.query_one("#status", Static)
        # The replay's status line is written and laid out once the replay is shown: one pause
        # was not always enough in a full suite (the line was still blank, one row high). A line
        # cut instead of wrapped never reaches two rows, and fails here.
        await until(pilot, lambda: "2026-01-15" in str(status.content) and status.size.height == 2)
        lines = [strip.text for strip in status.render_lines(status.region.reset_offset)]
        assert status.size.height == 2 and "2026-01-15" in "".join(lines), lines
