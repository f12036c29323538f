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
