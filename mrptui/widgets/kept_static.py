"""Widgets that draw their text again only when what they would draw changed.

Textual draws a text widget's whole content again on every refresh, and a refresh comes for more
than a new text: a pane whose border colour changes (the focus moving into or out of it)
refreshes all its children, so the plan's body, 20–40 lines of markup, was drawn anew on every
focus move into or out of the plan pane (~3–4 ms of a key's UI time, issue 41), and the key bar
drew its line again for each pane's keys although four panes' key sets come back in turn
(~1.5 ms a draw). What such a widget draws depends only on inputs it names (its text, size,
resolved style, the theme, for markup variables such as `$accent`, its links' style, a text
selection); the lines drawn for the last few sets of inputs are kept and shown again.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

from textual.geometry import Size
from textual.strip import Strip
from textual.visual import VisualType
from textual.widget import Widget, _RenderCache
from textual.widgets import Static

from mrptui.widgets.laid_out import LaidOutOnce

if TYPE_CHECKING:
    _Drawn = Widget
else:  # a plain mixin: a Widget base here would put its default CSS ahead of Static's (height: auto)
    _Drawn = object

KEPT_DRAWINGS = 8  # a pane's states that come back: the key bar's per focused pane, a few spare


class _Same:
    """An input compared by identity, held alive while its drawing is kept (so no newer object
    can reuse its `id`)."""

    __slots__ = ("held",)

    def __init__(self, held: object) -> None:
        self.held = held

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.held is self.held

    def __hash__(self) -> int:
        return id(self.held)


class KeptDrawing(_Drawn):
    """Mixed into a widget class: its drawn lines are kept per set of drawing inputs (`drawing_inputs`)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._drawings: OrderedDict[tuple[object, ...], tuple[list[Strip], object]] = OrderedDict()

    def drawing_inputs(self) -> tuple[object, ...]:
        """Everything the drawn lines depend on (hashable)."""
        return (self.size, self.visual_style, self.link_style, self.text_selection, self.app.theme)

    def drawn_extra(self) -> object:
        """What a draw computes besides the lines, restored with them (none by default)."""
        return None

    def restore_extra(self, extra: object) -> None:
        """Restore what `drawn_extra` returned with the lines drawn for the same inputs."""

    def _render_content(self) -> None:
        inputs = self.drawing_inputs()
        kept = self._drawings.get(inputs)
        if kept is not None:
            self._drawings.move_to_end(inputs)
            lines, extra = kept
            self._render_cache = _RenderCache(self.size, lines)
            self._dirty_regions.clear()
            self.restore_extra(extra)
            return
        super()._render_content()
        self._drawings[inputs] = (self._render_cache.lines, self.drawn_extra())
        while len(self._drawings) > KEPT_DRAWINGS:
            self._drawings.popitem(last=False)


class KeptStatic(LaidOutOnce, KeptDrawing, Static):
    """A Static whose drawn lines survive a refresh that changed nothing it draws."""

    def update(self, content: VisualType = "", *, layout: bool = True) -> None:
        """Static's update, laying the screen out again only when the new text's height differs.
        Static lays out on every update, and a layout pass measures and places every widget and
        draws the whole screen: the plan's and the answer's new texts made most of a live run's
        frames layout passes (issue 41) although most keep their line count. A width that follows
        the text (`width: auto`) always lays out; the default width is the container's."""
        width, styled = self.size.width, self.styles.width
        if not layout or not width or (styled is not None and styled.is_auto):
            super().update(content, layout=layout)
            return
        # Measured as a layout pass measures it, and kept as it keeps it: the old text's height is
        # the one the last pass measured, the new one's is there for the next pass.
        before = self.get_content_height(Size(0, 0), Size(0, 0), width)
        super().update(content, layout=False)
        if self.get_content_height(Size(0, 0), Size(0, 0), width) != before:
            self.refresh(layout=True, repaint=False)

    def drawing_inputs(self) -> tuple[object, ...]:
        # The visual by identity: `update` makes a new one, a refresh keeps it.
        return (_Same(self.visual), self.styles.content_align, *super().drawing_inputs())
