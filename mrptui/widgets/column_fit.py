"""Cells cut to a column's width and columns fitted to a table's room: the widest columns give way
first, id columns keep every id distinct (mrptui/widgets/id_cut.py), and a cut says where with "…".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from rich.cells import cell_len, set_cell_size
from rich.text import Text

from mrptui.widgets.cell_strip import Cell
from mrptui.widgets.id_cut import IdCut


def _width(cell: object) -> int:
    plain = cell.plain if isinstance(cell, Text | Cell) else str(cell)
    if "\n" not in plain:
        return cell_len(plain)
    return max((cell_len(line) for line in plain.splitlines()), default=0)


def cut(cell: object, width: int) -> Text | Cell:
    """`cell` in at most `width` cells, "…" where it was cut."""
    if isinstance(cell, Cell) and cell.plain.isprintable():
        # Cut as `Text.truncate` cuts, but kept a Cell: a 500-row refill cut a Text a row.
        if cell_len(cell.plain) <= width or width < 2:
            return cell
        return Cell(set_cell_size(cell.plain, width - 1) + "…", cell.style, cell.justify)
    return cut_text(cell, width)


def cut_text(cell: object, width: int) -> Text:
    """`cut` for a cell drawn as a Text (a header label, a Cell of unprintable text)."""
    text = cell.copy() if isinstance(cell, Text) else cell.__rich__() if isinstance(cell, Cell) else Text(str(cell))
    if text.cell_len <= width or width < 2:
        return text
    text.truncate(width, overflow="ellipsis")
    return text


def plain_of(cell: object) -> str:
    return cell.plain if isinstance(cell, Text | Cell) else str(cell)


def cut_id(cell: object, id_cut: IdCut) -> object:
    """An id cell cut as the column's `IdCut` says (its style kept); uncut ids stay as they are."""
    plain = plain_of(cell)
    shown = id_cut.apply(plain)
    if shown == plain:
        return cell
    if isinstance(cell, Cell):
        return Cell(shown, cell.style)
    style = cell.style if isinstance(cell, Text) else ""
    return Text(shown, style=style)


def fit_to_room(widths: Sequence[int], room: int, floors: Sequence[int]) -> list[int]:
    """Column widths that fit `room` cells: the widest columns give way first (a water level cut),
    none below its floor. Room to spare leaves every column its content width."""
    widths = list(widths)
    if sum(widths) <= room:
        return widths
    level = max(widths)
    # Each step lowers the level by one cell: at most max(widths) steps, a few dozen.
    while level > 0 and sum(max(min(w, level), f) for w, f in zip(widths, floors)) > room:
        level -= 1
    return [max(min(w, level), f) for w, f in zip(widths, floors)]


@dataclass(frozen=True)
class ColumnFit:
    """Column widths that fit a table's room, and how each column's cells are cut to them: the
    `id_cuts` columns (by index) by their `IdCut`, the `cut` ones with an ellipsis at the end."""

    widths: list[int]
    id_cuts: dict[int, IdCut]
    cut: frozenset[int]


def fit_columns(
    keys: Sequence[str],
    widths: Sequence[int],
    room: int,
    floors: dict[str, int],
    ids: set[int],
    id_cut: Callable[[int, int], IdCut],
) -> ColumnFit:
    """`widths` (content widths, by column) fitted to `room` cells of content: the columns named in
    `floors` (key → narrowest width) shrink, widest first, the others keep their width. A column
    among `ids` holds ids, cut to the shortest form that keeps every id of
    the column distinct (the middle gives way first), so such a column's floor is where that form
    fits: `id_cut(index, width)` gives that form for the `ids` columns (by index)."""
    floor_of = {
        key: max(floor, id_cut(index, floor).width) if index in ids else floor
        for index, key in enumerate(keys)
        if (floor := floors.get(key)) is not None
    }
    # Columns without a floor do not shrink: their content width is their floor.
    fitted = fit_to_room(widths, room, [floor_of.get(key, width) for key, width in zip(keys, widths)])
    if sum(fitted) > room:  # even the floors do not fit: the floored text columns go below them
        fitted = fit_to_room(
            fitted,
            room,
            [
                2 if key in floor_of and index not in ids else width
                for index, (key, width) in enumerate(zip(keys, fitted))
            ],
        )
    id_cuts, cut_columns = {}, set()
    for index, width in enumerate(fitted):
        if width >= widths[index]:
            continue
        if index in ids:
            id_cuts[index] = id_cut(index, width)
            fitted[index] = id_cuts[index].width
        else:  # DataTable crops silently: say where text was cut
            cut_columns.add(index)
    return ColumnFit(fitted, id_cuts, frozenset(cut_columns))


def content_widths(labels: Sequence[str], rows: Iterable[Sequence[object]]) -> list[int]:
    """Each column's widest cell or its label, in cells."""
    widths = [cell_len(label) for label in labels]
    for row in rows:
        for index, cell in enumerate(row):
            widths[index] = max(widths[index], _width(cell))
    return widths
