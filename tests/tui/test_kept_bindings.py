"""A panel screen works out its active bindings once per focus move, keymap and `refresh_bindings`
(mrptui/keys_in_force.py `KeepsActiveBindings`; issue 41: a panel key asked for them three times,
the focus model as the key arrived and the key bar twice), and what it hands back is what Textual
would work out at that moment."""

from __future__ import annotations

from conftest import make_app
from helpers import settle
from textual import screen as textual_screen

from mrptui.widgets.keybar import KeyBar
from mrptui.widgets.timeline import AttemptsTimeline

SIZE = (160, 45)
TEXTUAL_ACTIVE_BINDINGS = textual_screen.Screen.active_bindings


def fresh(screen) -> dict:
    """The active bindings as Textual works them out now, past any kept ones."""
    return TEXTUAL_ACTIVE_BINDINGS.fget(screen)  # type: ignore[attr-defined]


async def test_a_panel_key_works_out_the_bindings_once_and_the_key_bar_shows_them(monkeypatch) -> None:
    worked_out = []

    def counted(screen) -> dict:
        worked_out.append(screen.focused)
        return fresh(screen)

    monkeypatch.setattr(textual_screen.Screen, "active_bindings", property(counted))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.main.action_panel("attempts")
        await settle(pilot)
        bar = app.main.query_one(KeyBar)
        for key, panel in (("3", "evidence"), ("1", "plan"), ("4", "proofs"), ("2", "attempts")):
            target = app.main.query_one(f"#{panel}")
            worked_out.clear()
            await pilot.press(key)
            await settle(pilot)
            assert app.focused is target
            assert worked_out == [target], key  # once, for the new focus
            assert app.screen.active_bindings == fresh(app.screen)
            shown = list(bar._items)
            bar._made_from = None  # the key bar made again from scratch shows the same keys
            bar._bindings_changed(app.screen)
            assert bar._items == shown


async def test_what_a_widget_asks_for_and_a_focus_move_forget_the_kept_bindings() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        main = app.main
        timeline = main.query_one(AttemptsTimeline)
        timeline.focus()
        await settle(pilot)
        kept = main.active_bindings
        assert main.active_bindings is kept  # asked again with nothing changed: the same ones
        timeline.refresh_bindings()  # what its check_action says may have changed
        assert main.active_bindings is not kept and main.active_bindings == fresh(main)
        kept = main.active_bindings
        main.query_one("#plan").focus()
        await settle(pilot)
        assert main.active_bindings is not kept and main.active_bindings == fresh(main)
