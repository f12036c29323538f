"""Text widgets keep what they drew while nothing they draw changed (issue 41: a focus move into or
out of the plan pane drew the plan's whole body again, the key bar its line for every pane's keys),
and draw again when it did: new text, a new theme, a new size."""

from __future__ import annotations

from helpers import ask, settle, spy_calls
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.geometry import Region
from textual.visual import Visual
from textual.widget import Widget
from textual.widgets import Static

from mrptui.widgets.kept_static import KeptStatic
from mrptui.widgets.keybar import KeyBar
from mrptui.widgets.laid_out import LaidOutOnce

SIZE = (160, 45)


def drawn(widget: Widget) -> list[list]:
    return [list(strip) for strip in widget.render_lines(Region(0, 0, *widget.size))]


def fresh(widget: Widget) -> list[list]:
    """The same lines drawn with no kept drawing and no cache."""
    widget._drawings.clear()  # type: ignore[attr-defined]
    widget._styles_cache.clear()
    widget.refresh()
    return drawn(widget)


def count_draws(monkeypatch) -> list[Widget]:
    """The widget of each draw from scratch (Textual's own, under the kept one)."""
    widgets: list[Widget] = []
    to_strips = Visual.to_strips.__func__  # type: ignore[attr-defined]

    def counted(cls, widget, *args, **kwargs):
        widgets.append(widget)
        return to_strips(cls, widget, *args, **kwargs)

    monkeypatch.setattr(Visual, "to_strips", classmethod(counted))
    return widgets


async def test_focus_moves_keep_the_plan_body_and_key_bar_drawings_and_show_the_same(app, monkeypatch) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        body = app.screen.query_one("#plan-body", KeptStatic)
        bar = app.screen.query_one(KeyBar)
        keys = ("1", "3", "4", "2")
        for key in keys:  # every pane's key set drawn once
            await pilot.press(key)
            await pilot.pause()
            drawn(body), drawn(bar)
        widgets = count_draws(monkeypatch)
        for key in keys:  # the same key sets again: nothing new to draw
            await pilot.press(key)
            await pilot.pause()
            # Drawn as a frame draws them (a headless Pilot test paints no frames of its own).
            drawn(body), drawn(bar)
        assert widgets.count(body) == widgets.count(bar) == 0, widgets
        seen_bars = set()
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
            lines = drawn(bar)
            seen_bars.add(str(lines))
            assert drawn(body) == fresh(body), f"plan body after key {key}"
            assert lines == fresh(bar), f"key bar after key {key}"
        assert len(seen_bars) > 1  # the bar does show each pane's own keys


async def test_new_text_a_theme_and_a_size_are_drawn_not_served_from_what_was_kept(app) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        body = app.screen.query_one("#plan-body", KeptStatic)
        before = drawn(body)
        body.update("[b]a new plan[/b]")
        await pilot.pause()
        after_update = drawn(body)
        assert after_update != before and "a new plan" in "".join(seg.text for seg in after_update[0])
        app.theme = "textual-light"
        await pilot.pause()
        after_theme = drawn(body)
        assert after_theme != after_update and after_theme == fresh(body)
        await pilot.resize_terminal(120, 45)
        await settle(pilot)
        assert drawn(body) == fresh(body)


class _PaneApp(App[None]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield KeptStatic("one\ntwo", id="text")
            yield Static("below", id="below")


async def test_a_new_text_lays_the_screen_out_only_when_its_height_changed() -> None:
    """Static lays out the whole screen on every update; most of a run's new plans and answers keep
    their line count, and a layout pass draws every pane again (issue 41)."""
    app = _PaneApp()
    async with app.run_test(size=(40, 10)) as pilot:
        text = app.query_one("#text", KeptStatic)
        below = app.query_one("#below")
        await pilot.pause()
        layouts = spy_calls(app.screen, "_refresh_layout")
        text.update("uno\n[b]dos[/b]")
        await pilot.pause()
        assert not layouts
        assert "dos" in "".join(seg.text for seg in drawn(text)[1])
        text.update("one\ntwo\nthree")
        await pilot.pause()
        assert layouts and text.size.height == 3 and below.region.y == 3
        layouts.clear()
        text.update("a line that wraps at this width of forty cells")  # one line, two rows
        await pilot.pause()
        assert layouts and text.size.height == 2 and below.region.y == 2


class _GrowingPane(LaidOutOnce, VerticalScroll):
    pass


class _GrowingApp(App[None]):
    def compose(self) -> ComposeResult:
        with _GrowingPane():
            yield KeptStatic("one\ntwo", id="text")
        yield Static("below", id="below")


async def test_a_text_that_grows_is_laid_out_in_one_pass() -> None:
    """The layout pass that measured the grown text set the text's and the pane's virtual sizes,
    and each asked for one more pass of the whole screen, which found nothing to move (issue 41)."""
    app = _GrowingApp()
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        text = app.query_one("#text", KeptStatic)
        pane = app.query_one(_GrowingPane)
        layouts = spy_calls(app.screen, "_refresh_layout")
        text.update("\n".join(f"line {n}" for n in range(6)))
        for _ in range(3):
            await pilot.pause()
        assert len(layouts) == 1
        assert text.size.height == 6 and not pane.show_vertical_scrollbar
        text.update("\n".join(f"line {n}" for n in range(30)))  # now it scrolls
        for _ in range(3):
            await pilot.pause()
        assert text.size.height == 30 and pane.virtual_size.height == 30 and pane.show_vertical_scrollbar
        pane.scroll_end(animate=False)
        await pilot.pause()
        assert pane.scroll_y == pane.max_scroll_y > 0
