"""One focus model on every screen (issue 39): a question typed where no text box has focus goes to
the question box and is asked, never run as the screen's single-letter commands; `/` reaches the box
from any screen; keys queued while the editor had the terminal are dropped; Esc walks back the way
you came."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import pytest
from conftest import make_app
from fake_kb import CALLER
from fake_runs import thinkingdb_run
from helpers import QUESTION, ask, record_notifications, settle
from textual import events

from core.kernel.contract import Request
from mrptui.screens.diff import DiffScreen
from mrptui.screens.eval import EvalScreen
from mrptui.screens.kb import KBScreen
from mrptui.screens.memory import MemoryScreen
from mrptui.screens.modals import TextModal
from mrptui.screens.rules import RulesScreen
from mrptui.session_seam import NullSession
from mrptui.widgets.query import QueryBox

# Every single-letter command of every screen is in it (e k R q n N O f w c s r x p d g b i m t u v z),
# with digits and `/`, and it starts with a capital no screen binds. Short: Pilot waits ~40 ms a key.
TYPED = "Why Rex quickly moved twelve big funds from Nigel or Olga? 12 / zap"


def keys_for(text: str) -> list[str]:
    return ["space" if ch == " " else ch for ch in text]


@pytest.fixture
def editor_calls(tmp_path: Path, monkeypatch) -> Path:
    """$MRPTUI_EDITOR and $VISUAL set to a script that records each call (a line per call)."""
    calls = tmp_path / "calls.txt"
    script = tmp_path / "editor.py"
    script.write_text(f"import sys\nopen({str(calls)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n")
    monkeypatch.setenv("MRPTUI_EDITOR", f"'{sys.executable}' '{script}' {{file}}:{{line}}")
    monkeypatch.setenv("VISUAL", f"'{sys.executable}' '{script}'")
    return calls


def state(app) -> tuple:
    return (len(app.runs), app.cursor, frozenset(app.breakpoints), len(app.memory.scored(app.last_question)))


async def open_screen(pilot, name: str) -> None:
    """Open one screen the way a user does (the box has focus after the question was asked)."""
    keys = {
        "kb": ["f2"],
        "rules": ["f3"],
        "eval": ["f4"],
        "problems": ["f8"],
        "memory": ["ctrl+o"],
        "diff": ["escape", "d"],
    }[name]
    await pilot.press(*keys)
    await settle(pilot)


SCREENS = {
    "kb": KBScreen,
    "rules": RulesScreen,
    "eval": EvalScreen,
    "problems": TextModal,
    "memory": MemoryScreen,
    "diff": DiffScreen,
}


@pytest.mark.parametrize("name", list(SCREENS))
async def test_a_question_typed_on_any_screen_lands_in_the_box_runs_no_command_and_is_asked(name, editor_calls):
    app = make_app()
    app.suspend = contextlib.nullcontext  # type: ignore[method-assign] - the headless driver cannot suspend
    async with app.run_test(size=(150, 42)) as pilot:
        await ask(pilot, leave=False)
        await ask(pilot, "what is airflow", leave=False)  # a second run, so the diff opens
        await open_screen(pilot, name)
        assert isinstance(app.screen, SCREENS[name])
        before = state(app)
        notes = record_notifications(app)
        await pilot.press(*keys_for(TYPED))
        await settle(pilot)
        box = app.main.query_one(QueryBox)
        assert app.screen is app.main and app.focused is box
        assert box.text == TYPED  # the old question was selected: the first key replaced it
        assert state(app) == before and notes == [] and not editor_calls.exists()
        await pilot.press("enter")
        await settle(pilot)
        assert app.runs[-1].question == TYPED


async def test_in_replay_a_question_typed_on_the_kb_screen_lands_in_the_box_and_runs_nothing(editor_calls):
    app = make_app(NullSession(), replay=thinkingdb_run(Request(question=QUESTION, caller=CALLER)))
    app.suspend = contextlib.nullcontext  # type: ignore[method-assign]
    async with app.run_test(size=(150, 42)) as pilot:
        await pilot.pause()
        await pilot.press("f2")
        await pilot.pause()
        assert isinstance(app.screen, KBScreen)
        before = state(app)
        await pilot.press(*keys_for(TYPED))
        await settle(pilot)
        assert app.focused is app.main.query_one(QueryBox) and app.main.query_one(QueryBox).text == TYPED
        assert state(app) == before and not editor_calls.exists()


async def test_slash_goes_to_the_question_box_from_every_screen_and_types_nothing():
    """One app walks every screen: `/` changes nothing but the screen and focus, so each screen is
    reached from the same state as a fresh app's (two runs asked, the box focused)."""
    app = make_app()
    async with app.run_test(size=(150, 42)) as pilot:
        await ask(pilot, leave=False)
        await ask(pilot, "what is airflow", leave=False)
        box = app.main.query_one(QueryBox)
        for name in ["kb", "rules", "eval", "memory", "diff", "problems"]:
            await open_screen(pilot, name)
            assert isinstance(app.screen, SCREENS[name]), name
            await pilot.press("slash")
            await pilot.pause()
            assert app.screen is app.main and app.focused is box and box.text == "what is airflow", name
            assert len(app.runs) == 2, name


async def test_a_single_letter_command_still_runs_where_the_docs_say(editor_calls):
    app = make_app()
    app.suspend = contextlib.nullcontext  # type: ignore[method-assign]
    async with app.run_test(size=(150, 42)) as pilot:
        await pilot.press("f3")
        await pilot.pause()
        await pilot.press("e")  # rules: open the rule's file
        await pilot.pause()
        assert len(editor_calls.read_text().splitlines()) == 1 and isinstance(app.screen, RulesScreen)


async def test_keys_queued_while_the_editor_has_the_terminal_are_dropped(editor_calls):
    app = make_app()
    typed_meanwhile: list[str] = []

    @contextlib.contextmanager
    def suspend():
        yield
        for character in "eeek":  # keys that arrived while suspended, queued behind the editor
            typed_meanwhile.append(character)
            app.post_message(events.Key(character, character))

    app.suspend = suspend  # type: ignore[method-assign]
    async with app.run_test(size=(150, 42)) as pilot:
        await pilot.press("f3")
        await pilot.pause()
        await pilot.press("e")
        await settle(pilot)
        assert typed_meanwhile and len(editor_calls.read_text().splitlines()) == 1  # not four times
        assert isinstance(app.screen, RulesScreen)  # the queued `k` did not open the KB screen
        await pilot.press("k")  # a key typed after the editor came back is a command again
        await pilot.pause()
        assert isinstance(app.screen, KBScreen)


async def test_escape_walks_back_the_way_you_came():
    app = make_app()
    async with app.run_test(size=(150, 42)) as pilot:
        await pilot.press("f3")
        await pilot.pause()
        await pilot.press("k")
        await pilot.pause()
        assert [type(s).__name__ for s in app.screen_stack] == ["MainScreen", "RulesScreen", "KBScreen"]
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, RulesScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.main


async def test_a_question_typed_ahead_all_at_once_lands_whole_in_the_box(editor_calls):
    """As a paste or tmux send-keys delivers it: every key queued before the first is handled, so
    most are still on their way through the screen the first one closes. One app for the three
    screens: nothing runs, and the box is emptied again before the next."""
    app = make_app()
    app.suspend = contextlib.nullcontext  # type: ignore[method-assign]
    async with app.run_test(size=(150, 42)) as pilot:
        box = app.main.query_one(QueryBox)
        for name in ["rules", "kb", "problems"]:
            box.value = ""
            await open_screen(pilot, name)
            assert isinstance(app.screen, SCREENS[name]), name
            for character in TYPED:
                app.post_message(events.Key("space" if character == " " else character, character))
            await settle(pilot)
            assert app.screen is app.main and app.focused is box and box.text == TYPED, name
            assert not editor_calls.exists() and app.runs == [], name
