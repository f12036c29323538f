"""The explorer's conversation memory: follow-ups resolved from the query box, the Memory screen (ctrl+o)
and its keys (pin, forget, clear), on the real engine over a KB in a new domain."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import make_app
from helpers import ask, settle

from core.kernel.events import IntentDetected
from core.kernel.session import Session
from mrptui.screens.memory import MemoryScreen

FERRIES = Path(__file__).parent.parent / "fixtures" / "ferries"


@pytest.fixture(scope="module")
def ferries() -> Session:
    return Session.open([FERRIES])


def ferry_app(session: Session):
    app = make_app(session, kb_label="ferries")
    ticks = iter(range(1_000_000, 2_000_000, 30))
    app.memory.clock = lambda: float(next(ticks))
    return app


def target(app) -> str:
    intent = next(e for e in app.current.events if isinstance(e, IntentDetected))
    return intent.intents[0].target


async def test_follow_ups_typed_in_the_box_use_memory_and_the_memory_screen_shows_it(ferries):
    app = ferry_app(ferries)
    async with app.run_test(size=(160, 45)) as pilot:
        await ask(pilot, "What is Tern?")
        await ask(pilot, "Who maintains Tern?")
        await ask(pilot, "And Petrel?")
        assert target(app) == "Who maintains Petrel?"
        app.runner.rerun()  # a re-run reuses its request: no new turn
        await settle(pilot)
        await pilot.press("ctrl+o")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, MemoryScreen)
        assert [s.record.turn for s in screen.records if s.record.kind == "turn"] == [3, 2, 1] or sorted(
            s.record.turn for s in screen.records
        ) == [1, 2, 3]
        used = [s.record for s in screen.records if s.record.id in screen.used]
        assert [r.question for r in used] == ["Who maintains Tern?"]
        await pilot.press("p")  # pin the last answer as a note
        await settle(pilot)
        notes = [s.record for s in screen.records if s.record.kind == "note"]
        assert len(notes) == 1 and notes[0].question.startswith("Who maintains Petrel?")
        table = screen.query_one("#memory-table")
        table.move_cursor(row=[s.record.kind for s in screen.records].index("note"))
        await pilot.press("delete")
        await settle(pilot)
        assert [s.record.kind for s in screen.records] == ["turn"] * 3
        await pilot.press("x")
        await settle(pilot)
        assert screen.records == []
        await pilot.press("escape")
        await ask(pilot, "And Tern?")
        assert target(app) == "And Tern?"  # nothing left to refer back to


async def test_memory_is_off_in_replay_and_says_so(ferries):
    app = ferry_app(ferries)
    async with app.run_test(size=(120, 40)) as pilot:
        await ask(pilot, "What is Tern?")
        events = list(app.current.events)
    replay = make_app(None, replay=events)
    async with replay.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+o")
        await settle(pilot)
        assert "memory is off" in str(replay.screen.query_one("#memory-title").content)


def test_memory_screen_snapshot(snap_compare, ferries):
    async def run_before(pilot):
        await ask(pilot, "What is Tern?")
        await ask(pilot, "Who maintains it?")
        await pilot.press("ctrl+o")
        await settle(pilot)
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(ferry_app(ferries), terminal_size=(120, 40), run_before=run_before)


async def test_the_turn_whose_evidence_placed_the_follow_ups_candidates_is_marked_and_explained(ferries):
    app = ferry_app(ferries)
    async with app.run_test(size=(160, 45)) as pilot:
        await ask(pilot, "What is Tern?")
        await ask(pilot, "Who maintains it?")
        await pilot.press("ctrl+o")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, MemoryScreen)
        first = [s.record.turn for s in screen.records].index(1)
        assert screen.records[first].record.id in screen.placed and screen.records[first].record.id in screen.used
        screen.query_one("#memory-table").move_cursor(row=first)
        await settle(pilot)
        detail = str(screen.query_one("#memory-detail-text").content)
        assert "its evidence placed the last question's candidates" in detail
        assert "same (cited by turn 1's answer)" in detail


async def test_a_turn_whose_cited_unit_was_edited_is_not_reused_and_the_screen_counts_it(tmp_path):
    import shutil

    kb = tmp_path / "kb"
    shutil.copytree(FERRIES, kb)
    session = Session.open([kb])
    app = ferry_app(session)
    async with app.run_test(size=(160, 45)) as pilot:
        await ask(pilot, "What is Petrel?")
        fleet = kb / "fleet.md"
        fleet.write_text(fleet.read_text().replace("Sandmere twice a day", "Sandmere three times a day"))
        session.reload()
        await ask(pilot, "And Tern?")
        assert target(app) == "And Tern?"  # turn 1 quoted what Petrel's unit no longer says
        await pilot.press("ctrl+o")
        await settle(pilot)
        title = str(app.screen.query_one("#memory-title").content)
        assert "1 not used (a unit they cite changed or left your view)" in title


async def test_a_memory_file_that_cannot_be_used_is_a_notification_and_the_explorer_goes_on(ferries, tmp_path):
    from helpers import record_notifications

    from core.kernel.events import AnswerReady
    from core.memory.records import caller_digest
    from mrptui.screens.modals import ErrorModal

    app = make_app(ferries, kb_label="ferries", conversation="s", memory_root=tmp_path)
    blocked = tmp_path / caller_digest(app.caller) / "conversation-s.jsonl"
    blocked.mkdir(parents=True)  # a folder where the conversation's file should be
    notes = record_notifications(app)
    async with app.run_test(size=(160, 45)) as pilot:
        await ask(pilot, "What is Tern?")
        assert "passenger ferry" in next(e for e in app.current.events if isinstance(e, AnswerReady)).answer
        await ask(pilot, "Who maintains it?")
        warned = [n for n in notes if n.startswith("memory not read:")]
        assert len(warned) == 1 and str(blocked) in warned[0]  # said once, not once per turn
        assert not isinstance(app.screen, ErrorModal)
        blocked.rmdir()  # fixed while the explorer runs: the next turn is remembered
        await ask(pilot, "What is Petrel?")
        assert blocked.is_file() and "What is Petrel?" in blocked.read_text()
