"""A pane's styled lines kept per look, not built again when focus comes back (issue 41).

Textual draws a widget's lines in two steps: the widget's own content line, then the styled line
around it (border, padding, tint, opacity: `StylesCache.render_line`). A focus move restyles the
two panes it touches, which throws every styled line of both away, and the border colour that
changed means each line is styled again: about half of a key's frame, while the content lines
come back from the panes' own caches unchanged. Here a styled line is kept under everything the
styling reads (the look: sizes, colours, border, outline, tint, hatch, titles, opacity, theme),
its row, and the content line it wrapped; a pane that flips between focused and not finds the
line it drew for that look the last time, as long as its content line is the same one (the same
object from the pane's cache, or equal segments). Anything else is styled by Textual.
"""

from __future__ import annotations

import inspect
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual._styles_cache import StylesCache
from textual.strip import Strip

if TYPE_CHECKING:
    from rich.terminal_theme import TerminalTheme
    from textual.color import Color
    from textual.content import Content
    from textual.css.styles import StylesBase
    from textual.geometry import Size, Spacing
    from textual.style import Style
    from textual.widget import Widget

    _Lined = Widget
else:  # a plain mixin, as QuietScrollbars: a Widget base here would put its default CSS first
    _Lined = object

# The look reads `render`'s arguments by position and `render_line` is overridden argument for
# argument: a textual upgrade that changes either fails here, never silently.
assert list(inspect.signature(StylesCache.render).parameters)[:8] == [
    "self",
    "styles",
    "size",
    "base_background",
    "background",
    "render_content_line",
    "filters",
    "border_title",
], "textual's StylesCache.render changed"
assert list(inspect.signature(StylesCache.render_line).parameters)[:9] == [
    "self",
    "styles",
    "y",
    "size",
    "content_size",
    "padding",
    "base_background",
    "background",
    "render_content_line",
], "textual's StylesCache.render_line changed"

# Looks kept per widget: a pane shows two or three (focused, not, the app's theme changed);
# past this the oldest is dropped rather than grown without bound.
_KEPT_LOOKS = 4

# A row's kept line: the content row it wrapped and the content line (None for a border or
# padding row, which wraps none), and the styled line.
_Kept = tuple[tuple[int, Strip] | None, Strip]


def _look(styles: StylesBase, args: tuple, kwargs: dict[str, Any]) -> tuple:
    """What `StylesCache.render_line` reads besides the row and its content line: the arguments
    `render` hands it and the style rules it looks at."""
    size = args[0]
    return (
        args[:3],  # size, base background, background
        args[5:7],  # border title and subtitle, with their colours and styles
        kwargs.get("content_size") or size,
        kwargs.get("padding") or styles.padding,
        kwargs.get("opacity", 1.0),
        id(kwargs.get("ansi_theme")),
        kwargs.get("native_ansi", False),
        styles.gutter,
        styles.border,
        styles.outline,
        styles.hatch if styles.has_rule("hatch") else None,
        styles.tint,
        styles.border_title_align,
        styles.border_subtitle_align,
        styles.text_opacity,
    )


class KeptStylesCache(StylesCache):
    """Textual's StylesCache, keeping each look's styled lines across the clears of a refresh."""

    def __init__(self) -> None:
        super().__init__()
        self._looks: OrderedDict[tuple, dict[int, _Kept]] = OrderedDict()
        self._lines: dict[int, _Kept] = {}  # the look being drawn

    def render(self, styles: StylesBase, *args: Any, **kwargs: Any) -> list[Strip]:
        look = _look(styles, args, kwargs)
        lines = self._looks.get(look)
        if lines is None:
            lines = self._looks[look] = {}
            if len(self._looks) > _KEPT_LOOKS:
                self._looks.popitem(last=False)
        else:
            self._looks.move_to_end(look)
        self._lines = lines
        return super().render(styles, *args, **kwargs)

    def render_line(  # Textual's signature, argument for argument
        self,
        styles: StylesBase,
        y: int,
        size: Size,
        content_size: Size,
        padding: Spacing,
        base_background: Color,
        background: Color,
        render_content_line: Callable[[int], Strip],
        border_title: tuple[Content, Color, Color, Style] | None,
        border_subtitle: tuple[Content, Color, Color, Style] | None,
        opacity: float,
        ansi_theme: TerminalTheme,
        native_ansi: bool,
    ) -> Strip:
        kept = self._lines.get(y)
        asked: list[tuple[int, Strip]] = []

        def content_line(content_y: int) -> Strip:
            if asked and asked[0][0] == content_y:
                return asked[0][1]  # the line already asked for below: asked once
            line = render_content_line(content_y)
            asked.append((content_y, line))
            return line

        if kept is not None:
            wrapped, strip = kept
            if wrapped is None:
                return strip
            content_y, was = wrapped
            line = content_line(content_y)
            if line is was or line == was:
                return strip
        strip = super().render_line(
            styles,
            y,
            size,
            content_size,
            padding,
            base_background,
            background,
            content_line,
            border_title,
            border_subtitle,
            opacity,
            ansi_theme,
            native_ansi,
        )
        self._lines[y] = (asked[0] if asked else None, strip)
        return strip


class KeptLines(_Lined):
    """Mixed into a pane class: its styled lines are kept per look (see the module)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._styles_cache = KeptStylesCache()
