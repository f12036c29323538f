"""Frames draw only the widgets their dirty regions touch, and write what Textual's own frames
write (mrptui/screens/dirty_frames.py; issue 41: a panel key's frame drew every pane)."""

from __future__ import annotations

import time

import pytest
from conftest import make_app
from helpers import settle, until
from test_ui_first import SIZE, SlowSession, _live_run
from textual import events
from textual._compositor import Compositor
from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static

from mrptui.screens.dirty_frames import DirtyFramesCompositor


def checked_against_textual(compositor: Compositor, console) -> list[list[Widget]]:
    """Make each partial update of `compositor` also render as Textual's Compositor renders it,
    and fail when the two write different bytes; returns, per frame, the widgets ours drew."""
    ours = compositor.render_partial_update
    frames: list[list[Widget]] = []

    def checked():
        dirty = set(compositor._dirty_regions)
        stock = Compositor.render_partial_update(compositor)
        compositor._dirty_regions.update(dirty)
        drawn: list[Widget] = []
        renders = compositor._get_renders

        def noting(crop=None):
            # Textual's choice of what to draw: every visible widget whose clip overlaps the crop.
            visible = compositor.visible_widgets.items()
            drawn.extend(widget for widget, (_, clip) in visible if crop is None or crop.overlaps(clip))
            return renders(crop)

        compositor._get_renders = noting  # type: ignore[method-assign]
        try:
            update = ours()
        finally:
            del compositor._get_renders
        assert (stock and stock.render_segments(console)) == (update and update.render_segments(console))
        frames.append(drawn)
        return update

    compositor.render_partial_update = checked  # type: ignore[method-assign]
    return frames


class Stacked(Screen[None]):
    def __init__(self) -> None:
        super().__init__()
        self._compositor = DirtyFramesCompositor()

    def compose(self) -> ComposeResult:
        for name in ("top", "middle", "bottom"):
            yield Static(f"{name}\n" * 3, id=name)


class StackedApp(App[None]):
    CSS = "Static { height: 4; }"

    def on_mount(self) -> None:
        self.push_screen(Stacked())


@pytest.mark.paints
async def test_a_frame_leaves_out_a_widget_between_two_dirty_ones_and_writes_what_textual_writes() -> None:
    app = StackedApp()
    async with app.run_test(size=(40, 14)) as pilot:
        await pilot.pause()
        screen = app.screen
        frames = checked_against_textual(screen._compositor, app.console)
        screen.query_one("#top", Static).update("new top")
        screen.query_one("#bottom", Static).update("new bottom")
        await pilot.pause()
        await pilot.pause()
        drawn = [{widget.id for widget in frame} for frame in frames]
        assert any({"top", "bottom"} <= ids for ids in drawn), drawn
        # The middle one lies inside the rectangle around both (Textual draws it) but is dirty nowhere.
        assert not any("middle" in ids for ids in drawn), drawn


def _pane_of(widget: Widget) -> str | None:
    return next((node.id for node in widget.ancestors_with_self if "panel" in node.classes), None)


@pytest.mark.paints
async def test_the_explorers_frames_while_a_run_is_live_and_keys_move_the_focus_write_what_textual_writes() -> None:
    # Frames, not the engine's hold on the GIL, are what this checks: a sleeping engine still sends
    # events for live renders while the keys move the focus, and leaves the cores to the UI.
    session = SlowSession(between=time.sleep)
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        main = app.main
        frames = checked_against_textual(main._compositor, app.console)
        await _live_run(app, pilot, session)
        key_frames: list[set[str | None]] = []
        for key, panel in (("1", "plan"), ("3", "evidence"), ("4", "proofs"), ("2", "attempts")) * 2:
            target = main.query_one(f"#{panel}")
            seen = len(frames)
            app._driver.send_message(events.Key(key, key))
            await until(pilot, lambda: app.focused is target and len(frames) > seen)
            key_frames.append({_pane_of(widget) for widget in frames[-1]})
        app.control.cancel()
        await settle(pilot)
        # A focus move among plan, evidence, proofs and attempts leaves the answer pane alone:
        # some of those frames (those no live render shared) drew panes but not that one.
        assert any(panes and "answer" not in panes for panes in key_frames), key_frames
        assert len(frames) > 8
