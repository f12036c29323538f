"""Scrollbars drawn when what they show changes, not on every resize or restyle of their widget
(issue 41).

Textual repaints a widget's scrollbars whenever a layout pass changes its size or virtual size
(`Widget._scroll_update`, whether or not the bar's window changed) and whenever the widget is
restyled (every scrollbar colour set, changed or not, repaints both bars: a focus move restyles
the two panes it touches). While questions ran back to back, four scrollbar draws in five drew
the lines the bar had drawn before (199 of 249 over 20 questions, ~0.6 ms of the UI thread
each); a focus move drew ~5 bars. Here the resize repaints only what changed (the bar's window
and position are reactives that repaint on change, showing it goes through `display`, a layout
pass that resizes it marks it dirty), and a bar keeps its lines while what it draws is the same.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.geometry import Region, Size
from textual.scrollbar import ScrollBar
from textual.strip import Strip
from textual.widget import Widget

if TYPE_CHECKING:
    _Scrolled = Widget
else:  # a plain mixin, as LaidOutOnce: a Widget base here would put its default CSS first
    _Scrolled = object


class KeptScrollBar(ScrollBar):
    """A ScrollBar that keeps its lines while it would draw the same ones."""

    _kept: tuple[tuple, list[Strip]] | None = None

    def render_lines(self, crop: Region) -> list[Strip]:
        bar = self.render()  # what the bar draws: its window, position and colours
        app = self.app
        key = (
            crop,
            self.size,
            getattr(bar, "virtual_size", None),
            getattr(bar, "window_size", None),
            getattr(bar, "position", None),
            getattr(bar, "thickness", None),
            getattr(bar, "style", None),
            self.background_colors,
            self.styles._cache_key,
            tuple(self.get_line_filters()),
            id(app.ansi_theme),
            app.native_ansi_color,
        )
        if self._kept is None or self._kept[0] != key:
            self._kept = (key, super().render_lines(crop))
        return list(self._kept[1])


class QuietScrollbars(_Scrolled):
    """Mixed into a scrollable widget class: its scrollbars draw only when they change."""

    @property
    def vertical_scrollbar(self) -> ScrollBar:
        if self._vertical_scrollbar is None:
            self._vertical_scrollbar = self._start_scrollbar(True, self.scrollbar_size_vertical)
        return self._vertical_scrollbar

    @property
    def horizontal_scrollbar(self) -> ScrollBar:
        if self._horizontal_scrollbar is None:
            self._horizontal_scrollbar = self._start_scrollbar(False, self.scrollbar_size_horizontal)
        return self._horizontal_scrollbar

    def _start_scrollbar(self, vertical: bool, thickness: int) -> ScrollBar:
        # Textual's own start of a scrollbar, with the kept one.
        bar = KeptScrollBar(vertical=vertical, name="vertical" if vertical else "horizontal", thickness=thickness)
        bar.display = False
        self.app._start_widget(self, bar)
        return bar

    def _scroll_update(self, virtual_size: Size) -> None:
        # Textual's (pinned), without the unconditional `refresh()` of each shown scrollbar.
        self._refresh_scrollbars()
        width, height = self.container_size
        if self.show_vertical_scrollbar and self.styles.scrollbar_size_vertical:
            self.vertical_scrollbar.window_virtual_size = virtual_size.height
            self.vertical_scrollbar.window_size = height - self.scrollbar_size_horizontal
        if self.show_horizontal_scrollbar and self.styles.scrollbar_size_horizontal:
            self.horizontal_scrollbar.window_virtual_size = virtual_size.width
            self.horizontal_scrollbar.window_size = width - self.scrollbar_size_vertical
        self.scroll_x = self.validate_scroll_x(self.scroll_x)
        self.scroll_y = self.validate_scroll_y(self.scroll_y)
