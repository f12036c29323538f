"""Pilot tests: the user keymap, the binding ids the docs list, and the key bar."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import make_app
from helpers import ask, record_notifications, settle

from mrptui.widgets.query import QueryBox

SIZE = (160, 45)


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
        assert "Step" in titles and "Back (^b)" in titles  # `n` went to the box, where j and k type
        await pilot.press("escape")
        titles = [title for title, _, _ in app.palette_commands(app.screen)]
        assert "Step (j)" in titles and "Back (k)" in titles
        assert notes == [] or not any("Keymap" in n or "keymap" in n for n in notes)


async def test_a_remapped_window_key_is_shown_under_its_new_name_in_the_window(session, tmp_path):
    from mrptui.screens.evidence_detail import EvidenceDetailScreen
    from mrptui.widgets.keybar import KeyBar

    keymap = tmp_path / "keymap.json"
    keymap.write_text('{"detail.copy": "y", "detail.unit": "ctrl+u", "main.step": "j"}')
    app = make_app(session, keymap_path=keymap)
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        await pilot.press("3", "down", "enter")
        assert isinstance(app.screen, EvidenceDetailScreen)
        await pilot.pause()
        bar = app.screen.query_one(KeyBar)
        assert bar.keys == ["esc", "y", "^u", "^q"]  # not c, u; not the main screen's j
        titles = [title for title, _, _ in app.palette_commands(app.screen)]
        assert "Copy (y)" in titles and "Unit (^u)" in titles and "Copy (c)" not in titles
        await pilot.press("y")  # the key it names runs it
        assert isinstance(app.screen, EvidenceDetailScreen)


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
