"""Fill a DataTable with columns sized to their content right away.

DataTable measures auto-width columns later, on an Idle event; until then a fresh table draws with
header-wide columns. Sizing the columns ourselves makes every frame right (and snapshots stable).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.widgets import DataTable


def _width(cell: object) -> int:
    plain = cell.plain if isinstance(cell, Text) else str(cell)
    return max((cell_len(line) for line in plain.splitlines()), default=0)


def refill(
    table: DataTable,
    columns: Sequence[tuple[str, str]],
    rows: Iterable[Sequence[object]],
    *,
    fixed: dict[str, int] | None = None,
) -> None:
    """Replace the table's columns and rows; `fixed` pins some column widths (by key)."""
    rows = [list(row) for row in rows]
    widths = [cell_len(label) for _, label in columns]
    for row in rows:
        for index, cell in enumerate(row):
            widths[index] = max(widths[index], _width(cell))
    table.clear(columns=True)
    for (key, label), width in zip(columns, widths, strict=True):
        table.add_column(label, key=key, width=(fixed or {}).get(key, width))
    for row in rows:
        table.add_row(*row)


def component_style(widget, name: str) -> Style:
    """A component class's colour and text style as a Rich style, with translucent theme colours
    (such as $text-muted) blended onto the widget's background so they stay muted."""
    styles = widget.get_component_styles(name)
    color = styles.color
    if color.a < 1:
        color = widget.background_colors[1] + color
    text_style = styles.text_style
    return Style(color=color.rich_color, bold=text_style.bold or None, italic=text_style.italic or None)
