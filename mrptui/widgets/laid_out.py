"""Widgets whose new virtual size does not ask for a second layout pass (issue 41).

A layout pass gives each widget its virtual size (`Widget._size_updated`), and Textual sets it as
a reactive declared `layout=True`: a widget whose text grew asks, from inside the pass that just
measured it, for another pass of the whole screen, which finds nothing to move. While a question
ran, a quarter of the screen's layout passes were such repeats, each one measuring every widget
again and redrawing what was dirty. No one watches a virtual size; what follows from it is done
in the same pass (the scrollbars' windows and their showing or hiding, which still lays out when
it changes, and a Resize event).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.geometry import Size
from textual.reactive import Reactive
from textual.widget import Widget

if TYPE_CHECKING:
    _Sized = Widget
else:  # a plain mixin, as KeptDrawing: a Widget base here would put its default CSS first
    _Sized = object


class LaidOutOnce(_Sized):
    """Mixed into a widget class: the virtual size a layout pass gives it is set without asking
    for another pass."""

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True) -> bool:
        return super()._size_updated(size, virtual_size, container_size, layout=False)


class ScrolledInPlace(_Sized):
    """Mixed into a ScrollView class (a table drawn line by line): a new virtual size updates its
    scrollbars and repaints it, and asks for a layout pass only when its own width or height
    follows its content (`auto`). Textual declares the virtual size `layout=True`, so a live
    question's timeline, growing by a row or two a render, laid out the whole screen after most
    renders (47 of 64 passes over 60 keys at 20k, ~19 ms each with their frame). A ScrollView has
    no children to place: its region is its box's, its content is drawn by its `render_line`s,
    and what the pass did with the new virtual size was only the scrollbars' windows (showing or
    hiding a bar still lays out, `show_vertical_scrollbar` asks for it)."""

    virtual_size = Reactive(Size(0, 0), layout=False)

    def _watch_virtual_size(self, _old: Size, new: Size) -> None:
        width, height = self.styles.width, self.styles.height
        if not self.container_size or (width is not None and width.is_auto) or (height is not None and height.is_auto):
            self.refresh(layout=True)
            return
        self._scroll_update(new)
