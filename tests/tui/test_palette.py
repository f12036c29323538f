"""Pilot tests: the command palette."""

from __future__ import annotations

from helpers import ask, settle, until

from mrptui.breakpoints import Breakpoint
from mrptui.screens.caller import CallerModal
from mrptui.widgets.evidence import EvidenceTable
from mrptui.widgets.query import QueryBox

SIZE = (160, 45)


async def test_palette_commands_cover_bindings_and_plugins(app):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        commands = {title: callback for title, _, callback in app.palette_commands(app.screen)}
        for title in (
            "Step (n)",
            "Back (b)",
            "Continue (.)",
            "Save (s)",
            "Diff (d)",
            "Break on any backtrack: off",
            "Break on stage kb: off",
            "Break on plugin kb-fast: off",
            "Pin kb-balanced for kb",
            "Break before costly plugins: off",
            "Exclude kb-fast",
            "Toggle light/dark theme (^t)",  # the key bar's spelling, as every other entry
            "Sort",  # the evidence table's: `o` does not sort from the timeline, which has the focus
            "Undo the last change (^z)",
            "Ask as another caller (^g)",
            "Help for the focused panel (f1)",
        ):
            assert title in commands, title
        commands["Break on stage kb: off"]()
        assert Breakpoint("stage", "kb") in app.breakpoints
        titles = [title for title, _, _ in app.palette_commands(app.screen)]
        assert "Break on stage kb: on" in titles and "Break on stage kb: off" not in titles
        commands["Pin kb-balanced for kb"]()
        await settle(pilot)
        assert app.current.request.pins == {"kb": "kb-balanced"}
        await commands["Ask as another caller (^g)"]()
        await pilot.pause()
        assert isinstance(app.screen, CallerModal)


async def test_palette_from_the_question_box_names_keys_that_run_there(app):
    """In the box a letter types: a command is named by a key that runs it from there, or by none."""
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, leave=False)
        assert isinstance(app.focused, QueryBox)
        titles = set(title for title, _, _ in app.palette_commands(app.screen))
        assert {"Step (f10)", "Back (shift+f10)", "Diff (alt+d)", "Rules (f3)", "Sort", "Drop unit"} <= titles
        assert not {"Step (n)", "Diff (d)", "Rules (R)", "Sort (o)", "Drop unit (u)"} & titles
        app.screen.query_one(EvidenceTable).focus()
        await pilot.pause()
        titles = set(title for title, _, _ in app.palette_commands(app.screen))
        assert {"Step (n)", "Sort (o)", "Drop unit (u)"} <= titles


async def test_palette_opens_and_runs_a_command(app):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        await pilot.press("ctrl+p")
        await pilot.press(*"break on any backtrack")
        # The palette shows its search's hits in batches: Enter runs whichever is highlighted then.
        await until(pilot, lambda: highlighted_command(app).lower().startswith("break on any backtrack"))
        await pilot.press("enter")
        await pilot.pause()
        assert Breakpoint("backtrack") in app.breakpoints


def highlighted_command(app) -> str:
    """The command the open palette would run on Enter ("" while its list is empty)."""
    from textual.command import CommandList

    listed = app.screen.query(CommandList)
    at = listed.first().highlighted if listed else None
    return "" if at is None else str(listed.first().get_option_at_index(at).hit.text)
