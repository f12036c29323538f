"""Pilot tests draw the screen once, at their end, instead of after every key (docs/testing.md).

Painting the top screen after each key (textual's Screen._compositor_refresh: every dirty widget's
lines rendered and handed to the headless driver, which throws them away) was ~45% of a Pilot
test's CPU. What the tests assert is the app's and the widgets' state, and what they read off a
widget they render themselves (`render_line`, snapshots). So, per test:

- the top screen's paint is skipped: its dirty regions are dropped as a paint would drop them;
- the first mouse event turns painting back on for the rest of the test, after one paint of the
  whole screen: a click or hover lands on what was drawn (the key bar maps its keys as it draws);
- at the end of each `run_test` block the app, if still running, draws its whole screen once
  (`export_screenshot`), so a widget whose drawing raises in the state a test left still fails it.

A test that reads what a widget works out while drawing (the key bar's spans) is marked `paints`
and paints after every key. Snapshot tests are unchanged: `snap_compare` draws its own screenshot. A textual upgrade that drops
the private method fails at import here, never silently."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import pytest
from textual.app import App
from textual.pilot import Pilot
from textual.screen import Screen

assert callable(getattr(Screen, "_compositor_refresh", None)), "textual no longer paints in Screen._compositor_refresh"

_MOUSE = ("click", "double_click", "triple_click", "hover", "mouse_down", "mouse_up")


def paint_only_when_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    painting = {"on": False}
    paint = Screen._compositor_refresh

    def skip_the_top_screens_paint(self: Screen) -> None:
        app = self.app
        if painting["on"] or app.is_inline or self is not app.screen:
            paint(self)
            return
        self._compositor._dirty_regions.clear()
        self._dirty_widgets.clear()
        app._update_mouse_over(self)
        # The dropped paint is this test's frame: an engine waiting at its pause point for the
        # frame that answers a key (mrptui/ui_first.py) goes on now, not after the gate's bound.
        ui_first = getattr(app, "ui_first", None)
        if ui_first is not None:
            ui_first.painted()

    monkeypatch.setattr(Screen, "_compositor_refresh", skip_the_top_screens_paint)
    for name in _MOUSE:
        monkeypatch.setattr(Pilot, name, _painting_first(getattr(Pilot, name), painting))
    monkeypatch.setattr(App, "run_test", _drawn_at_the_end(App.run_test))


def _painting_first(mouse_event, painting: dict[str, bool]):
    async def wrapper(self: Pilot, *args, **kwargs):
        if not painting["on"]:
            painting["on"] = True
            self.app.screen.refresh()
            await self.pause()
        return await mouse_event(self, *args, **kwargs)

    return wrapper


def _drawn_at_the_end(run_test):
    @contextlib.asynccontextmanager
    async def wrapper(self: App, *args, **kwargs) -> AsyncIterator[Pilot]:
        async with run_test(self, *args, **kwargs) as pilot:
            yield pilot
            if self.is_running and self.return_code is None:  # not quit by the test
                self.export_screenshot()

    return wrapper
