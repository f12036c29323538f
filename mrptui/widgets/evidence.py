"""The evidence table: every candidate a kb plugin scored, sortable by any column, capped for speed."""

from __future__ import annotations

import csv
import io
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType

from core.kernel.candidates import CandidateScore
from core.kernel.events import RetrievalScored
from mrptui.widgets.cell_strip import Cell
from mrptui.widgets.cell_table import CellTable
from mrptui.widgets.column_fit import ColumnFit, cut, cut_id, fit_columns
from mrptui.widgets.evidence_rows import (
    COLUMNS,
    DEFAULT_SORT,
    ID_FLOOR,
    ROW_CAP,
    SHARD_COLUMN,
    Column,
    columns_of,
    fmt,
    rows_of,
    sort_candidates,
)
from mrptui.widgets.tables import component_style, report_natural_width
from mrptui.widgets.virtual_table import Cells

__all__ = [
    "COLUMNS",
    "ROW_CAP",
    "SHARD_COLUMN",
    "Column",
    "EvidenceTable",
    "candidates_csv",
    "columns_of",
    "sort_candidates",
]
# The unit id gives way (in its middle, to a form unique in the table) to the score columns, so none
# is cut off at the edge; the role, last, is cut with an ellipsis rather than at the edge.
FLOORS = {"id": ID_FLOOR, "kept": 10, "role": 5}


def candidates_csv(scored: RetrievalScored) -> str:
    """All candidates of one retrieval as CSV (no row cap)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        [
            "plugin",
            "intent",
            "rank",
            "unit",
            "role",
            "bm25_raw",
            "bm25",
            "hdc",
            "tdb",
            "fused",
            "score",
            "agreement",
            "role_boost",
            "kept",
            "cut_reason",
        ]
    )
    for c in scored.candidates:
        writer.writerow(
            [
                scored.plugin,
                scored.intent_index,
                c.rank,
                c.id,
                c.role,
                c.bm25_raw,
                c.bm25,
                c.hdc,
                c.tdb,
                c.fused,
                c.score,
                c.agreement,
                c.role_boost,
                c.kept,
                c.cut_reason or "",
            ]
        )
    return out.getvalue()


class EvidenceTable(CellTable):
    """Candidates of one RetrievalScored event (the latest by default)."""

    HELP = """\
## Evidence
The candidates a kb plugin scored for one intent: BM25 (normalised), HDC, ThinkingDB (TDB), the
fused score, the final score after the role boost, and whether the unit was kept or cut — with the
exact cut reason (min_score, gap or max_results).

- `o` sorts by the next column, `O` reverses; clicking a header sorts by it (again: reverse).
  Each new run (a new question, a re-run) starts in rank order, kept rows first.
- `v` cycles through every retrieval so far (each kb plugin, each intent); default: the latest.
- `enter` (or a click on a highlighted row) opens the score breakdown: BM25 per term and field,
  HDC per field, normalisation, agreement bonus, role boost and the unit's text.
- At most 500 rows are drawn; the border says "showing N of M". `e` exports all rows as CSV.
- Searched on a cluster (`mrptui --cluster`): a shard column (`sh`) names the shard that holds
  each unit (— for a sentence of the question itself, scored here).
"""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"evidence--kept", "evidence--cut", "evidence--muted"}

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right", "screen.step_forward", "Step", show=False, id="evidence.right"),
        Binding("left", "screen.step_back", "Back", show=False, id="evidence.left"),
        Binding("home", "screen.to_start", "To start", show=False, id="evidence.home"),
        Binding("end", "screen.to_end", "To end", show=False, id="evidence.end"),
        Binding("o", "sort_next", "Sort", id="evidence.sort", tooltip="Sort by the next column"),
        Binding(
            "u",
            "screen.exclude_unit",
            "Drop unit",
            id="evidence.exclude_unit",
            tooltip="Exclude this unit from the evidence: live while held before retrieval, else a re-run",
        ),
        Binding("O", "sort_reverse", "Reverse", id="evidence.reverse", tooltip="Reverse the sort order"),
        Binding(
            "v",
            "next_retrieval",
            "Retrieval",
            id="evidence.retrieval",
            tooltip="Show the next retrieval (kb plugin / intent)",
        ),
    ]

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.retrievals: tuple[RetrievalScored, ...] = ()
        self.choice: int | None = None  # index into retrievals; None = the latest
        self.sort_column, self.sort_reverse = DEFAULT_SORT
        self.run: object = None  # the run shown: a new one starts in the default order
        self._rows = rows_of(None, *DEFAULT_SORT)
        self._fit = ColumnFit([], {}, frozenset())
        self._styles: tuple[Style, Style, Style] | None = None  # kept, cut, muted: as at the refill
        self._key: tuple | None = None

    @property
    def columns_shown(self) -> tuple[Column, ...]:
        return columns_of(self.current)

    @property
    def _shown(self) -> list[CandidateScore]:
        return self._rows.shown

    def on_mount(self) -> None:
        self._rebuild(force=True)
        self.app.theme_changed_signal.subscribe(self, lambda _: self._rebuild(force=True))

    def on_resize(self) -> None:
        self._rebuild(force=True)

    # -- state ------------------------------------------------------------------------------

    @property
    def current(self) -> RetrievalScored | None:
        if not self.retrievals:
            return None
        if self.choice is None or self.choice >= len(self.retrievals):
            return self.retrievals[-1]
        return self.retrievals[self.choice]

    @property
    def total(self) -> int:
        current = self.current
        return len(current.candidates) if current else 0

    @property
    def selected(self) -> CandidateScore | None:
        if not self._shown or not (0 <= self.cursor_row < len(self._shown)):
            return None
        return self._shown[self.cursor_row]

    def show(self, retrievals: tuple[RetrievalScored, ...], run: object = None) -> None:
        """Show `retrievals` of `run`. A new run starts at its latest retrieval in rank order, so
        the kept rows are on top (a sort chosen for the previous question could hide them below
        the fold); stepping through one run keeps the sort chosen for it."""
        if run != self.run:
            self.run = run
            self.choice = None
            self.sort_column, self.sort_reverse = DEFAULT_SORT
        self.retrievals = retrievals
        if self.choice is not None and self.choice >= len(retrievals):
            self.choice = None
        self._rebuild()

    def sort_by(self, column: str, reverse: bool | None = None) -> None:
        if reverse is None:
            reverse = (not self.sort_reverse) if column == self.sort_column else column not in ("rank", "id", "role")
        self.sort_column, self.sort_reverse = column, reverse
        self._rebuild()

    # -- actions ----------------------------------------------------------------------------

    def action_sort_next(self) -> None:
        keys = [c.key for c in self.columns_shown]
        column = keys[(keys.index(self.sort_column) + 1) % len(keys)]
        self.sort_by(column)

    def action_sort_reverse(self) -> None:
        self.sort_by(self.sort_column, not self.sort_reverse)

    def action_next_retrieval(self) -> None:
        if not self.retrievals:
            self.notify("no retrieval yet")
            return
        position = len(self.retrievals) - 1 if self.choice is None else self.choice
        position = (position + 1) % len(self.retrievals)
        self.choice = None if position == len(self.retrievals) - 1 else position
        self.move_cursor(0)
        self._rebuild()

    def header_clicked(self, column: int) -> None:
        self.sort_by(self._rows.columns[column].key)

    # -- rendering --------------------------------------------------------------------------

    def _title(self) -> tuple[str, str]:
        current = self.current
        if current is None:
            return "Evidence", ""
        position = self.retrievals.index(current) + 1
        title = f"Evidence · {current.plugin} · intent {current.intent_index} · {'+'.join(current.lanes)}"
        if len(self.retrievals) > 1:
            title += f" · {position}/{len(self.retrievals)}"
        arrow = "↓" if self.sort_reverse else "↑"
        shown = min(ROW_CAP, len(current.candidates))
        cap = f"showing {shown} of {len(current.candidates)}" if len(current.candidates) > ROW_CAP else f"{shown} rows"
        verdict = "sufficient" if current.sufficient else "insufficient"
        return title, f"{cap} · {verdict} · by {self.sort_column} {arrow}"

    def _rebuild(self, force: bool = False) -> None:
        if not self.is_mounted:
            return
        current = self.current
        if self.sort_column not in {col.key for col in columns_of(current)}:  # by shard, on a one-process retrieval
            self.sort_column, self.sort_reverse = DEFAULT_SORT
        key = (id(current), self.sort_column, self.sort_reverse)
        if key == self._key and not force:
            return
        same_retrieval = self._key is not None and self._key[0] == key[0]
        self._key = key
        title, subtitle = self._title()
        self.border_title, self.border_subtitle = title, subtitle
        cursor = self.cursor_row if same_retrieval else 0
        self._rows = rows = rows_of(current, self.sort_column, self.sort_reverse)
        self._styles = tuple(component_style(self, f"evidence--{name}") for name in ("kept", "cut", "muted"))  # type: ignore[assignment]
        keys = [col.key for col in rows.columns]
        # A table with no rows has nothing to show: it yields its width to its neighbours.
        report_natural_width(self, sum(w + 2 for w in rows.widths) if rows.texts else 0)
        self._fit = ColumnFit(rows.widths, {}, frozenset())
        if self.size.width:
            room = self.scrollable_content_region.width - 2 * len(keys)
            self._fit = fit_columns(keys, rows.widths, room, FLOORS, {keys.index("id")}, lambda _, w: rows.id_cut(w))
        self.fill(
            [(col.label, width) for col, width in zip(rows.columns, self._fit.widths)], len(rows.texts), self._cells_of
        )
        if cursor != self.cursor_row:
            self.move_cursor(cursor)

    def _cells_of(self, index: int) -> Cells:
        """Row `index`'s cells as the columns show them: styled, aligned and cut to their widths."""
        kept, cut_style, muted = self._styles or (Style(), Style(), Style())
        candidate, fit = self._rows.shown[index], self._fit
        cells: list[Cell | Text] = []
        for at, (col, text) in enumerate(zip(self._rows.columns, self._rows.texts[index])):
            if col.key == "kept":
                cell = Cell(text, kept if candidate.kept else cut_style)
            elif col.key == "boost":
                cell = Cell(text, justify="right")
            elif col.numeric:
                cell = Cell(text, muted if col.value(candidate) is None else "", "right")
            else:
                cell = Cell(text)
            if at in fit.id_cuts:
                cells.append(cut_id(cell, fit.id_cuts[at]))  # type: ignore[arg-type]
            else:
                cells.append(cut(cell, fit.widths[at]) if at in fit.cut else cell)
        return cells

    def copy_text(self) -> str | None:
        c = self.selected
        if c is None:
            return None
        return "\t".join(fmt(col.value(c)) for col in self.columns_shown)
