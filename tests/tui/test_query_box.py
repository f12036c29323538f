"""The question box as a shell: clear, history across sessions, history search, `/` then typing."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from conftest import make_app
from helpers import ask, settle
from textual import events

from mrptui.history import MAX_ENTRIES, QuestionHistory, history_path
from mrptui.widgets.query import QueryBox


async def test_ctrl_u_clears_every_line_of_the_question(app) -> None:
    async with app.run_test(size=(150, 42)) as pilot:
        box = app.screen.query_one(QueryBox)
        await pilot.press(*"first", "ctrl+j", *"second", "ctrl+j", *"third")
        assert box.text.count("\n") == 2
        await pilot.press("ctrl+u")
        assert box.text == ""
        assert "ctrl+u" in " ".join(app.screen.query_one("KeyBar").keys).lower() or any(
            "^u" in key for key in app.screen.query_one("KeyBar").keys
        )


async def test_keys_typed_right_after_ctrl_u_land_in_the_cleared_box(app) -> None:
    """ctrl+u then "abc" in one burst (tmux send-keys C-u abc, a fast typist): every key is queued
    in the box before the first is handled. ctrl+u is the box's own binding; run only once the key
    had bubbled back to the app, it cleared the "abc" typed meanwhile."""
    async with app.run_test(size=(150, 42)) as pilot:
        box = app.screen.query_one(QueryBox)
        await pilot.press(*"first", "ctrl+j", *"second")
        for key, character in (("ctrl+u", None), ("a", "a"), ("b", "b"), ("c", "c")):
            app.post_message(events.Key(key, character))
        await settle(pilot)
        assert box.text == "abc" and box.has_focus
        for key, character in (("f7", None), ("x", "x"), ("ctrl+u", None), ("y", "y")):
            app.post_message(events.Key(key, character))  # f7 selects all: x replaces the question
        await settle(pilot)
        assert box.text == "y"


async def test_history_walks_back_and_forward_and_persists_across_sessions(_private_history: Path) -> None:
    first = make_app()
    async with first.run_test(size=(150, 42)) as pilot:
        await ask(pilot, "which tools are relevant for data pipelines")
        await ask(pilot, "what is kb-fast")
    saved = [json.loads(line) for line in _private_history.read_text().splitlines()]
    assert saved == ["which tools are relevant for data pipelines", "what is kb-fast"]

    second = make_app()
    async with second.run_test(size=(150, 42)) as pilot:
        box = second.screen.query_one(QueryBox)
        await pilot.press(*"draft")
        await pilot.press("up")
        assert box.text == "what is kb-fast"
        await pilot.press("up")
        assert box.text == "which tools are relevant for data pipelines"
        await pilot.press("up")  # the oldest stays
        assert box.text == "which tools are relevant for data pipelines"
        await pilot.press("down")
        assert box.text == "what is kb-fast"
        await pilot.press("down")
        assert box.text == "draft"


async def test_ctrl_r_in_the_box_searches_the_history_for_older_matches(_private_history: Path) -> None:
    _private_history.write_text("".join(json.dumps(q) + "\n" for q in ["alpha tools", "beta", "gamma tools"]))
    app = make_app()
    async with app.run_test(size=(150, 42)) as pilot:
        box = app.screen.query_one(QueryBox)
        await pilot.press(*"tools", "ctrl+r")
        assert box.text == "gamma tools" and "tools" in str(box.border_subtitle)
        await pilot.press("ctrl+r")
        assert box.text == "alpha tools"
        await pilot.press("ctrl+r")
        assert box.text == "alpha tools" and "no older question" in str(box.border_subtitle)
        assert app.current is None  # ctrl+r in the box searched; it did not re-run


async def test_slash_focuses_the_box_and_what_follows_is_typed_there(app) -> None:
    async with app.run_test(size=(150, 42)) as pilot:
        await ask(pilot, "which tools are relevant for data pipelines")
        await pilot.press("escape")
        await settle(pilot)
        box = app.screen.query_one(QueryBox)
        assert not box.has_focus
        box.clear()
        cursor = app.cursor
        app.screen.query_one("#attempts").focus()
        await pilot.pause()
        # All four keys queued at once, as a fast typist or `tmux send-keys /bbb` delivers them.
        for key, character in (("slash", "/"), ("b", "b"), ("b", "b"), ("b", "b")):
            app.post_message(events.Key(key, character))
        await pilot.pause()
        await settle(pilot)
        assert box.has_focus and box.text == "bbb"
        assert app.cursor == cursor
        await pilot.press("slash", "c")  # inside the box, `/` is text
        assert box.text == "bbb/c"


def test_history_file_location_follows_the_environment(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv("MRPTUI_HISTORY")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert history_path() == tmp_path / "mrptui" / "history"
    monkeypatch.setenv("MRPTUI_HISTORY", str(tmp_path / "h"))
    assert history_path() == tmp_path / "h"


def test_history_keeps_multi_line_questions_skips_repeats_and_damaged_lines(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "history"
    history = QuestionHistory(path)
    for question in ["one\ntwo", "one\ntwo", "three"]:
        history.add(question)
    path.write_text(path.read_text() + "{not json\n")
    assert QuestionHistory(path).entries == ["one\ntwo", "three"]


def test_history_is_bounded(tmp_path: Path) -> None:
    history = QuestionHistory(tmp_path / "history")
    for number in range(MAX_ENTRIES + 5):
        history.add(f"q{number}")
    again = QuestionHistory(tmp_path / "history")
    assert len(again.entries) == MAX_ENTRIES and again.entries[-1] == f"q{MAX_ENTRIES + 4}"


def test_the_history_is_0600_whatever_the_umask(tmp_path: Path) -> None:
    import os
    import stat

    path = tmp_path / "data" / "history"
    mask = os.umask(0)
    try:
        history = QuestionHistory(path)
        history.add("what is the vault code?")
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        for number in range(MAX_ENTRIES + 1):  # a rewrite (trimmed) keeps it private
            history.add(f"q{number}")
    finally:
        os.umask(mask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_an_unwritable_history_is_reported_not_raised(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    history = QuestionHistory(blocker / "history")
    history.add("q")
    assert history.entries == ["q"] and "not saved" in history.error


def test_a_history_made_read_only_is_kept_as_it_is_and_the_question_is_kept_in_memory(tmp_path: Path) -> None:
    path = tmp_path / "history"
    path.write_text('"asked before"\n', encoding="utf-8")
    path.chmod(0o400)
    history = QuestionHistory(path)
    for number in range(MAX_ENTRIES + 1):  # a rewrite (trimmed) would replace the file by rename
        history.add(f"q{number}")
    assert history.entries[-1] == f"q{MAX_ENTRIES}"
    assert history.error == f"question history not saved to {path}: it is read-only (mode 0400)"
    assert path.read_text(encoding="utf-8") == '"asked before"\n' and stat.S_IMODE(path.stat().st_mode) == 0o400


async def test_enter_typed_before_the_box_was_on_screen_runs_the_question(app) -> None:
    """`mrptui --kb K` then a question and Enter typed at once (tmux send-keys, a fast typist):
    the keys arrive while the terminal is still in cooked mode, whose ICRNL turns Enter's CR into
    LF, so the box reads ctrl+j. Keys read before the box was mounted are typed ahead: that
    ctrl+j runs the question. The same ctrl+j pressed once the box is shown starts a new line
    (test_ctrl_u_clears_every_line_of_the_question)."""
    question = "what is kb-fast"
    typed_ahead = [events.Key("space" if c == " " else c, c) for c in question] + [events.Key("ctrl+j", "\n")]
    async with app.run_test(size=(150, 42)) as pilot:
        box = app.screen.query_one(QueryBox)
        for key in typed_ahead:
            box.post_message(key)
        await settle(pilot)
        assert [run.request.question for run in app.runs] == [question]
        assert "\n" not in box.text
