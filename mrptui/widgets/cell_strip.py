"""A table cell of plain text drawn straight to segments, as Rich would draw it.

DataTable renders every cell through Rich (`Styled(Padding(Text))`: wrapping, justifying and
styling passes per cell), 16-24% of the UI thread while questions run back to back (issue 41).
A cell that is one line of text, narrower than its column, needs none of that: its segments are
the padding, the text and the fill, each with the styles Rich would combine for it. A text with
spans (the timeline's status symbol after its breakpoint mark) is cut into its styled pieces by
Rich's own `Text.render`. Anything else (markup, wrapping, cropping, centring, a justified text
with spans) is left to Rich.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

_EASY_JUSTIFY = (None, "default", "left", "right")


class Cell:
    """A cell's text, style and alignment, made a Rich Text only when the table draws it: a
    DataTable draws only the rows on screen, and a 500-row evidence refill built 5,000 Texts for
    the ~20 shown (issue 25)."""

    __slots__ = ("plain", "style", "justify")

    def __init__(self, plain: str, style: Style | str = "", justify: str | None = None) -> None:
        self.plain, self.style, self.justify = plain, style, justify

    def __rich__(self) -> Text:
        return Text(self.plain, style=self.style, justify=self.justify)  # type: ignore[arg-type]

    def __str__(self) -> str:
        return self.plain


def _parts(datum: object) -> tuple[str, Style | str, str | None] | None:
    """The text, style and justification of a cell drawn here, or None for one Rich must draw."""
    if isinstance(datum, Cell):
        return datum.plain, datum.style, datum.justify
    if isinstance(datum, Text) and datum.end == "\n" and datum.overflow is None:
        return datum.plain, datum.style, datum.justify
    return None


def plain_cell_line(
    console: Console,
    datum: object,
    width: int,
    padding: int,
    pre_style: Style,
    post_style: Style,
) -> list[Segment] | None:
    """The one line of segments Rich renders for `datum` in a cell `width` wide (`padding` each
    side), or None when the cell is not plain enough to draw here."""
    parts = _parts(datum)
    if parts is None:
        return None
    plain, style, justify = parts
    room = width - 2 * padding
    if justify not in _EASY_JUSTIFY or room < 0 or not plain.isprintable() or cell_len(plain) > room:
        return None
    own = console.get_style(style) if isinstance(style, str) else style
    outer = pre_style + post_style
    # Rich styles the text with its own style over the cell's, and the fill after it with the
    # text's style only when the text justifies itself (it pads inside the text); else the pad is bare.
    inner = pre_style + own + post_style if own else outer
    fill = " " * (room - cell_len(plain))
    pad = Segment(" " * padding, outer) if padding else None
    if isinstance(datum, Text) and datum.spans:
        if justify not in (None, "default"):
            return None
        # Rich's pieces, each styled as its Styled wrapper would: the cell's style, the piece's, the post.
        body = [
            Segment(piece.text, pre_style + piece.style + post_style if piece.style else outer)
            for piece in datum.render(console, end="")
            if piece.text
        ]
        body.append(Segment(fill, outer))
    elif justify == "right":
        body = [Segment(fill + plain, inner)]
    elif justify == "left":
        body = [Segment(plain + fill, inner)]
    else:
        body = [Segment(plain, inner), Segment(fill, outer)]
    return [segment for segment in (pad, *body, pad) if segment is not None and segment.text]
