"""The evidence table: every candidate a kb plugin scored, sortable by any column, capped for speed."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import DataTable

from core.kernel.candidates import CandidateScore
from core.kernel.events import RetrievalScored
from mrptui.widgets.tables import Cell, FilledTable, component_style, refill

ROW_CAP = 500
DEFAULT_SORT = ("rank", False)


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    value: Callable[[CandidateScore], object]
    numeric: bool = True


def _kept(c: CandidateScore) -> str:
    if c.kept:
        return "kept: proof" if c.kept_with else "kept"
    return f"cut: {c.cut_reason or '?'}"


COLUMNS: tuple[Column, ...] = (
    Column("rank", "#", lambda c: c.rank),
    Column("id", "unit", lambda c: c.id, numeric=False),
    Column("kept", "kept / cut", _kept, numeric=False),
    Column("score", "score", lambda c: c.score),
    Column("fused", "fused", lambda c: c.fused),  # beside the score it becomes: a narrow pane keeps both
    Column("bm25", "BM25", lambda c: c.bm25),
    Column("hdc", "HDC", lambda c: c.hdc),
    Column("tdb", "TDB", lambda c: c.tdb),
    Column("boost", "boost", lambda c: c.role_boost),
    Column("role", "role", lambda c: c.role, numeric=False),
)
# The shard that holds each unit, after "kept / cut", in a retrieval searched on a cluster only;
# headed "sh" so that at 120 columns the cut reasons beside it still fit.
SHARD_COLUMN = Column("shard", "sh", lambda c: c.shard)


def columns_of(scored: RetrievalScored | None) -> tuple[Column, ...]:
    """The table's columns for `scored`: a shard column only when its KB was searched on shards."""
    if scored is None or not scored.shards:
        return COLUMNS
    at = next(i for i, col in enumerate(COLUMNS) if col.key == "kept") + 1
    return (*COLUMNS[:at], SHARD_COLUMN, *COLUMNS[at:])


def sort_candidates(candidates: Sequence[CandidateScore], column: str, reverse: bool) -> list[CandidateScore]:
    """Candidates ordered by `column`; missing values always last, ties by unit id."""
    col = next(c for c in (*COLUMNS, SHARD_COLUMN) if c.key == column)
    present = [c for c in candidates if col.value(c) is not None]
    missing = [c for c in candidates if col.value(c) is None]
    present.sort(key=lambda c: c.id)
    present.sort(key=lambda c: col.value(c), reverse=reverse)  # type: ignore[arg-type, return-value]
    return present + sorted(missing, key=lambda c: c.id)


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


def _fmt(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


class EvidenceTable(FilledTable):
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
        super().__init__(id=id, classes=classes, cursor_type="row", zebra_stripes=True)
        self.retrievals: tuple[RetrievalScored, ...] = ()
        self.choice: int | None = None  # index into retrievals; None = the latest
        self.sort_column, self.sort_reverse = DEFAULT_SORT
        self.run: object = None  # the run shown: a new one starts in the default order
        self._shown: list[CandidateScore] = []
        self._key: tuple | None = None

    @property
    def columns_shown(self) -> tuple[Column, ...]:
        return columns_of(self.current)

    def on_mount(self) -> None:
        refill(self, [(col.key, col.label) for col in COLUMNS], [])
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
        self.cursor_coordinate = self.cursor_coordinate._replace(row=0)
        self._rebuild()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        self.sort_by(str(event.column_key.value))

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
        self._shown = (
            sort_candidates(current.candidates, self.sort_column, self.sort_reverse)[:ROW_CAP] if current else []
        )
        kept = component_style(self, "evidence--kept")
        cut = component_style(self, "evidence--cut")
        muted = component_style(self, "evidence--muted")
        columns = self.columns_shown
        rows = []
        for c in self._shown:
            cells = []
            for col in columns:
                value = col.value(c)
                if col.key == "kept":
                    cells.append(Cell(_fmt(value), kept if c.kept else cut))
                elif col.key == "boost":
                    cells.append(Cell(f"×{c.role_boost:g}" if c.role_boost != 1.0 else "", justify="right"))
                elif col.numeric:
                    cells.append(Cell(_fmt(value), muted if value is None else "", "right"))
                else:
                    cells.append(Cell(_fmt(value)))
            rows.append(cells)
        # The unit id gives way (in its middle, to a form unique in the table) to the score columns, so
        # none is cut off at the edge; the role, last, is cut with an ellipsis rather than at the edge.
        refill(
            self,
            [(col.key, col.label) for col in columns],
            rows,
            floors={"id": 16, "kept": 10, "role": 5},
            middle={"id"},
        )
        if self.row_count:
            self.move_cursor(row=min(cursor, self.row_count - 1), animate=False)

    def copy_text(self) -> str | None:
        c = self.selected
        if c is None:
            return None
        return "\t".join(_fmt(col.value(c)) for col in self.columns_shown)
