"""Pilot tests: saving a trace, replaying it (with and without the KB), exporting."""

from __future__ import annotations

from pathlib import Path

from conftest import make_app
from fake_kb import CALLER
from fakes import FakeSession
from helpers import QUESTION, ask, record_notifications, settle, text_of, until
from textual.widgets import DataTable, Input, Static

from core.kernel.events import read_trace
from mrptui.screens.main import MainScreen
from mrptui.screens.modals import PathModal, TextModal
from mrptui.widgets.evidence import EvidenceTable
from mrptui.widgets.query import QueryBox
from mrptui.widgets.virtual_table import VirtualTable

SIZE = (160, 45)


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
    from fake_runs import thinkingdb_run

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
    from fake_runs import thinkingdb_run

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
