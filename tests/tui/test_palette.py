"""Pilot tests: the command palette."""

from __future__ import annotations

from helpers import ask, settle, until

from mrptui.breakpoints import Breakpoint

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
            "Toggle light/dark theme (ctrl+t)",
            "Sort (o)",
            "Undo the last change (ctrl+z)",
        ):
            assert title in commands, title
        commands["Break on stage kb: off"]()
        assert Breakpoint("stage", "kb") in app.breakpoints
        titles = [title for title, _, _ in app.palette_commands(app.screen)]
        assert "Break on stage kb: on" in titles and "Break on stage kb: off" not in titles
        commands["Pin kb-balanced for kb"]()
        await settle(pilot)
        assert app.current.request.pins == {"kb": "kb-balanced"}


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
