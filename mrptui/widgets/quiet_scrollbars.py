"""Scrollbars repainted when what they draw changes, not on every resize of their widget (issue 41).

Textual's `Widget._scroll_update` runs whenever a layout pass changes a scrollable widget's size
or virtual size: it sets each shown scrollbar's window and then repaints the bar whether or not
the window changed, which drops the bar's drawn lines. While questions ran back to back, four
scrollbar draws in five drew the same lines as the bar's draw before (199 of 249 over 20
questions, ~0.6 ms of the UI thread each). Every change a bar draws repaints it without that call:
its window sizes and position are reactives that repaint on change, showing it goes through
`display`, its colours through the styles, and a layout pass that resizes it marks it dirty.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.geometry import Size
from textual.widget import Widget

if TYPE_CHECKING:
    _Scrolled = Widget
else:  # a plain mixin, as LaidOutOnce: a Widget base here would put its default CSS first
    _Scrolled = object


class QuietScrollbars(_Scrolled):
    """Mixed into a scrollable widget class: its scrollbars repaint only when they change."""

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
