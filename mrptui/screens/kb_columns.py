"""The KB screen's unit columns: what each shows of a unit, and how wide each is from the content
of the view.

A view held as table rows (`core.kb.unit_table.RowUnits`, every real KB) gives each unit's id, role
and file:line from its columns without restoring a unit, so those widths come from every row
(22–36 ms for all widths at 50k units under load 15, once per view). Topic and triple are in the unit itself: they are read from at most
WIDTH_READS units spread evenly over the view (every unit of a smaller one), and the table's
subtitle says so when it lists more units than that.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text

from core.units import KnowledgeUnit
from mrptui.widgets.column_fit import fit_to_room
from mrptui.widgets.id_cut import IdCut

# Units read (restored from the index store on a large KB) for the topic and triple widths.
WIDTH_READS = 1_000
# (label, widest allowed): a longer cell is cut with an ellipsis (enter shows the whole unit).
UNIT_COLUMNS = [("unit", 60), ("role", 14), ("topic", 60), ("triple", 50), ("file:line", 60)]
UNIT_FLOORS = {"unit": 18, "role": 9, "topic": 10, "triple": 14, "file:line": 12}
MARK = "▸ "  # before the id of a unit the search matched
# Where even the columns' floors do not fit, each may go down to this (a cut cell says "…"):
# a column past the pane's edge was clipped with no ellipsis.
CUT_FLOOR = 5


def unit_cells(
    unit: KnowledgeUnit, marked: bool, source_first: bool, id_cut: IdCut | None = None, where_width: int = 0
) -> list[Text]:
    where = f"{unit.location.file}:{unit.location.line}" if unit.location else ""
    if 1 < where_width < cell_len(where):  # the file's name and the line tell a unit's place: its folders give way
        where = "…" + where[-(where_width - 1) :]
    shown_id = id_cut.apply(unit.id) if id_cut else unit.id
    return [
        Text((MARK if marked else "") + shown_id, style="bold" if source_first else ""),
        Text(unit.role.value),
        Text(unit.topic),
        Text(triple(unit)),
        Text(where, style="dim"),
    ]


def triple(unit: KnowledgeUnit) -> str:
    return f"{unit.subject} {unit.relation.value} {unit.object}" if unit.relation else ""


def widest(values: Iterable[str]) -> int:
    """The widest value in terminal cells. An ASCII character is one cell, so only the others are
    measured cell by cell (rich's cell_len costs ~2 µs a string: 0.2 s over 100k ids)."""
    values = values if isinstance(values, Sequence) else list(values)
    wide = max((cell_len(value) for value in values if not value.isascii()), default=0)
    return max(max(map(len, values), default=0), wide)


@dataclass(frozen=True)
class ContentWidths:
    """Each column's content width (its label included, not capped), and the view positions of
    the units read for them."""

    widths: tuple[int, ...]
    read: tuple[int, ...]
    ids: Sequence[str] = ()  # every id of the view where the view lists them, else those read


def spread(count: int, budget: int) -> range:
    """At most `budget` positions spread evenly over `count`."""
    return range(0, count, max(-(-count // budget), 1)) if count else range(0)


def content_widths(units: Sequence[KnowledgeUnit], *, marked: bool) -> ContentWidths:
    """Column widths from the view's content; `marked`: some ids carry the search's mark."""
    read = spread(len(units), WIDTH_READS)
    peek = getattr(units, "peek", units.__getitem__)  # a scan must not keep stored units restored
    sample = [peek(position) for position in read]
    listed = getattr(units, "listed", None)
    if listed is not None:
        ids, roles, lines = listed()
        locations = max((cell_len(file) + 1 + len(str(line)) for file, line in lines.items()), default=0)
        role_width = max((len(role.value) for role in roles), default=0)
    else:  # a plain list (a fake, a replay's ids): what was read is all there is
        ids = [unit.id for unit in sample]
        role_width = max((len(unit.role.value) for unit in sample), default=0)
        locations = widest(f"{u.location.file}:{u.location.line}" for u in sample if u.location)
    content = (
        widest(ids) + (len(MARK) if marked else 0),
        role_width,
        widest(unit.topic for unit in sample),
        widest(triple(unit) for unit in sample),
        locations,
    )
    widths = tuple(max(width, cell_len(label)) for width, (label, _) in zip(content, UNIT_COLUMNS))
    return ContentWidths(widths, tuple(read), ids)


def fit_unit_columns(widths: list[int], room: int, unit_floor: int | None = None) -> list[tuple[str, int]]:
    """Content widths capped, then fitted to `room` cells (widest give way first, none below its
    floor), so the triple column is not cut to a letter."""
    widths = [min(width, cap) for width, (_, cap) in zip(widths, UNIT_COLUMNS)]
    if room > 0:
        floors = {**UNIT_FLOORS, "unit": unit_floor or UNIT_FLOORS["unit"]}
        widths = fit_to_room(widths, room, [min(w, floors[label]) for w, (label, _) in zip(widths, UNIT_COLUMNS)])
        if sum(widths) > room:  # narrower than the floors (80 columns): below them, not past the edge
            cut = [
                min(w, floors["unit"] if label == "unit" else CUT_FLOOR) for w, (label, _) in zip(widths, UNIT_COLUMNS)
            ]
            widths = fit_to_room(widths, room, cut)
        # Room to spare goes to the text columns (topic, triple), so file:line ends at the right edge.
        spare = room - sum(widths)
        if spare > 0:
            widths[2] += spare // 2
            widths[3] += spare - spare // 2
    return [(label, width) for (label, _), width in zip(UNIT_COLUMNS, widths)]
