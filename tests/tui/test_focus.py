"""The focus model (harlequin's and posting's): the question box keeps focus after Enter and in
replay, printable keys always type there, and commands are F-keys, alt chords and the palette."""

from __future__ import annotations

import pytest
from conftest import make_app
from helpers import QUESTION, record_notifications, settle, until

from core.kernel.contract import Request
from mrptui.session_seam import NullSession
from mrptui.widgets.keybar import KeyBar
from mrptui.widgets.query import QueryBox

SIZE = (150, 42)
# Every single-letter command of the main screen and the timeline is in it (i d e s t n b g k m z c p x u r).
NEXT = "Which intent did kb-fast use, and does step b expose gaps? 12345 / zoom copy pin x u r."


def keys_for(text: str) -> list[str]:
    return ["space" if ch == " " else ch for ch in text]


def snapshot(app) -> tuple:
    return (
        len(app.runs),
        app.cursor,
        len(app.screen_stack),
        type(app.screen).__name__,
        frozenset(app.breakpoints),
        app.screen.query_one(QueryBox).has_focus,
    )


async def test_after_enter_the_next_question_is_typed_into_the_box_and_nothing_else_happens(app) -> None:
    async with app.run_test(size=SIZE) as pilot:
        box = app.screen.query_one(QueryBox)
        await pilot.press(*keys_for(QUESTION), "enter")
        await settle(pilot)
        assert len(app.runs) == 1 and box.has_focus
        before = snapshot(app)
        notes = record_notifications(app)
        await pilot.press(*keys_for(NEXT))
        await settle(pilot)
        assert box.text == NEXT  # the previous question was selected, so typing replaced it
        assert snapshot(app) == before and notes == []
        await pilot.press("enter")
        await settle(pilot)
        assert [run.question for run in app.runs] == [QUESTION, NEXT] and box.has_focus


async def test_in_replay_the_box_has_focus_typing_lands_there_and_enter_is_refused_with_a_message() -> None:
    from fake_kb import CALLER
    from fake_runs import thinkingdb_run

    app = make_app(NullSession(), replay=thinkingdb_run(Request(question=QUESTION, caller=CALLER)))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.screen.query_one(QueryBox).text == QUESTION)
        box = app.screen.query_one(QueryBox)
        assert box.has_focus and box.text == QUESTION
        before = snapshot(app)
        notes = record_notifications(app)
        await pilot.press(*keys_for(NEXT))
        await settle(pilot)
        assert box.text == NEXT and snapshot(app) == before and notes == []
        await pilot.press("enter")
        await settle(pilot)
        assert len(app.runs) == 1 and box.has_focus
        assert len(notes) == 1 and "replayed trace" in notes[0] and "asking" in notes[0]


async def test_escape_leaves_the_box_and_slash_or_ctrl_l_return_to_it(app) -> None:
    async with app.run_test(size=SIZE) as pilot:
        box = app.screen.query_one(QueryBox)
        await pilot.press(*keys_for(QUESTION), "enter")
        await settle(pilot)
        await pilot.press("escape")
        assert not box.has_focus
        await pilot.press("b")  # a single letter is a command outside the box
        assert app.cursor == len(app.current.events) - 1 and box.text == QUESTION
        await pilot.press("ctrl+l")
        assert box.has_focus
        await pilot.press("escape", "slash", "x")
        assert box.has_focus and box.text.endswith("x")


async def test_commands_reach_the_engine_from_the_box_by_f_key_and_alt_chord(app) -> None:
    async with app.run_test(size=SIZE) as pilot:
        box = app.screen.query_one(QueryBox)
        await pilot.press(*keys_for(QUESTION), "enter")
        await settle(pilot)
        end = len(app.current.events)
        await pilot.press("shift+f10")
        assert app.cursor == end - 1
        await pilot.press("alt+b")
        assert app.cursor == end - 2 and box.text == QUESTION  # alt+b stepped back, typed nothing
        await pilot.press("f10")
        assert app.cursor == end - 1 and box.has_focus


async def test_the_key_bar_offers_esc_and_chords_while_the_box_has_focus_and_letters_outside_it(app) -> None:
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        bar = app.screen.query_one(KeyBar)
        assert app.screen.query_one(QueryBox).has_focus and "esc" in bar.keys  # at start: esc leaves the box
        await pilot.press(*keys_for(QUESTION), "enter")
        await settle(pilot)
        assert not any(len(key) == 1 for key in bar.keys), bar.keys  # in the box: no key that would type
        assert "f10" in bar.keys and "alt+d" in bar.keys
        await pilot.press("escape")
        await pilot.pause()
        assert "n" in bar.keys


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_the_key_bar_shows_each_key_with_its_whole_label_or_leaves_it_out(app, size) -> None:
    # At 120 columns the bar used to end in "shift+f10" without "Back"; at 80, "esc Le".
    async with app.run_test(size=size) as pilot:
        await pilot.press(*keys_for(QUESTION), "enter")
        await settle(pilot)
        bar = app.screen.query_one(KeyBar)
        line = bar.render().plain
        shown = [(key, description) for _, key, description in bar._items if f" {key} " in line]
        assert shown, line
        for key, description in shown:
            assert f" {key} {description} " in line, (size, key, line)
