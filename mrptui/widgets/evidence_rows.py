"""The evidence pane's rows: one retrieval's candidates sorted, capped and written out as text.

Built once a retrieval and order, and for the order a new run shows first (rank) in the engine
worker as the events arrive (`prepared`), so the pane's refill on the UI thread picks up rows that
exist already (issue 41: the refill cost ~28 ms of the UI thread a question). Nothing here touches
a widget: the texts, their widths and the unit ids' cuts depend on the candidates only.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from core.kernel.candidates import CandidateScore
from core.kernel.events import RetrievalScored
from mrptui.widgets.column_fit import content_widths
from mrptui.widgets.id_cut import IdCut, unique_cut

ROW_CAP = 500
DEFAULT_SORT = ("rank", False)
ID_FLOOR = 16  # the unit id column's narrowest width (wider when its ids need it to stay distinct)
_KEPT_ORDERS = 16  # retrievals × orders kept: a run's retrievals, stepped through and re-sorted


@dataclass(frozen=True)
class Column:
    """One column of the evidence table: its key, label and how to read a candidate's value."""

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


def fmt(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def cell_text(column: Column, candidate: CandidateScore) -> str:
    """What the pane shows of `candidate` under `column`."""
    if column.key == "boost":
        return f"×{candidate.role_boost:g}" if candidate.role_boost != 1.0 else ""
    return fmt(column.value(candidate))


@dataclass
class EvidenceRows:
    """One retrieval's shown rows (at most `ROW_CAP`) in one order, with each column's content
    width and the unit ids' cuts, remembered by width."""

    columns: tuple[Column, ...]
    shown: list[CandidateScore]
    texts: list[tuple[str, ...]]
    widths: list[int]
    _id_cuts: dict[int, IdCut] = field(default_factory=dict)

    def id_cut(self, width: int) -> IdCut:
        """The unit ids' shortest cut that keeps them distinct in `width` cells (`unique_cut`)."""
        found = self._id_cuts.get(width)
        if found is None:
            at = next(i for i, col in enumerate(self.columns) if col.key == "id")
            found = self._id_cuts[width] = unique_cut([row[at] for row in self.texts], width)
        return found


def build_rows(scored: RetrievalScored | None, column: str, reverse: bool) -> EvidenceRows:
    columns = columns_of(scored)
    shown = sort_candidates(scored.candidates, column, reverse)[:ROW_CAP] if scored else []
    texts = [tuple(cell_text(col, c) for col in columns) for c in shown]
    rows = EvidenceRows(columns, shown, texts, content_widths([col.label for col in columns], texts))
    if texts:
        rows.id_cut(ID_FLOOR)  # every refill asks for it (the id column's floor)
    return rows


E = TypeVar("E", bound=Sequence[object])
_kept_rows: OrderedDict[tuple[int, str, bool], tuple[RetrievalScored, EvidenceRows]] = OrderedDict()
_lock = threading.Lock()


def rows_of(scored: RetrievalScored | None, column: str, reverse: bool) -> EvidenceRows:
    """`scored`'s rows in the order of `column`, built once (held with the retrieval, so an id
    reused by another object never finds them)."""
    if scored is None:
        return build_rows(None, column, reverse)
    key = (id(scored), column, reverse)
    with _lock:
        found = _kept_rows.get(key)
        if found is not None and found[0] is scored:
            _kept_rows.move_to_end(key)
            return found[1]
    rows = build_rows(scored, column, reverse)
    with _lock:
        _kept_rows[key] = (scored, rows)
        while len(_kept_rows) > _KEPT_ORDERS:
            _kept_rows.popitem(last=False)
    return rows


def prepared(events: E) -> E:
    """`events`, with the rows a new run shows first built for each retrieval among them (the
    engine worker passes its events through here before the UI thread gets them)."""
    for event in events:
        if isinstance(event, RetrievalScored):
            rows_of(event, *DEFAULT_SORT)
    return events
