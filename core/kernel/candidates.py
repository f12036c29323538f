"""A `RetrievalScored` event's scored candidates: one row per unit a kb plugin scored.

The rows travel as `CandidateRows`, a sequence whose rows the engine hands over as a function of
plain fields, and that become `CandidateScore` models when first read. An `ask` at 100k units scores 200 rows
per kb plugin call, and creating their ~1,000 models (rows, BM25 terms, lanes) was about a sixth
of a question's CPU although nothing in the run reads them: the caller's view, the JSON CLI and
a saved trace read them, and read the same models, built from the same fields, as before
(docs/decisions.md, "Trace rows built when read").
"""

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal, cast, overload

from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler, TypeAdapter
from pydantic_core import core_schema


class _Row(BaseModel):
    # Built on first use (the rows are read as models by the caller's view, the JSON CLI and a
    # saved trace, not by a run): a plain `mrptui ask` builds only `FusionExplanation` (issue 41).
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class TermContribution(_Row):
    term: str
    field: str
    tf: int
    idf: float
    field_weight: float
    contribution: float
    # The synonym that put this term in the query (`notebook → laptop`), or "".
    via: str = ""


class LaneScore(_Row):
    """One lane's part in a candidate's fused score (docs/scoring.md, Fusion)."""

    lane: str
    raw: float | None = None  # BM25's raw score, before normalisation (the other lanes score in [0, 1])
    score: float  # the normalised score fusion sums
    weight: float


class FusionExplanation(_Row):
    """How a candidate's `fused` was summed: Σ weight × score over the lanes that found it, plus
    the agreement bonus when it earned one (0 when not)."""

    lanes: tuple[LaneScore, ...]
    bonus: float = 0.0
    fused: float


class CandidateScore(_Row):
    """One unit as a kb plugin scored it, with the exact reason it was kept or cut."""

    id: str
    role: str
    rank: int
    bm25_raw: float | None = None
    bm25: float | None = None
    hdc: float | None = None
    tdb: float | None = None
    dense: float | None = None
    fused: float
    score: float
    agreement: bool = False
    role_boost: float = 1.0
    kept: bool
    cut_reason: Literal["min_score", "gap", "max_results"] | None = None
    # Kept past maxResults as a leaf of this ThinkingDB proof (its fact), whose other leaves were kept.
    kept_with: str = ""
    current_turn: bool = False
    # The shard (1-based, as "shard 3 of 4" names it) that holds the unit when the KB was searched
    # on a cluster (core/kb/sharding); None in one process and for current-turn units.
    shard: int | None = None
    # The conversation-position prior added to `score` (core/memory/position.py); 0 outside one.
    position: float = 0.0
    bm25_terms: tuple[TermContribution, ...] = ()
    hdc_fields: dict[str, float] = Field(default_factory=dict)
    # Question words HDC matched through a near form of a unit word, and the shared n-grams
    # (core/retrieval/hdc/index.py match_notes); like every event field, no unit text.
    hdc_match: tuple[str, ...] = ()
    fusion: FusionExplanation | None = None  # None in a trace recorded before fusion was explained


@functools.cache
def _rows_adapter() -> TypeAdapter[list[CandidateScore]]:
    # Built on first read of rows built when read: a run that reads none never builds it.
    return TypeAdapter(list[CandidateScore])


class CandidateRows(Sequence[CandidateScore]):
    """The rows of one event, in rank order. Rows given as models (a trace read back, a test) are
    validated at once, as any event field; rows the engine gives as fields (`built_when_read`) are
    built and validated row by row when first read, each once. Compares, hashes and serialises as the tuple
    of its rows, so the JSON written is the same either way."""

    __slots__ = ("_fields", "_rows")

    def __init__(self, rows: Sequence[CandidateScore] = ()):
        self._fields: Callable[[int], Mapping[str, object]] | None = None
        self._rows: list[CandidateScore | None] = list(rows)

    @classmethod
    def built_when_read(cls, count: int, fields: Callable[[int], Mapping[str, object]]) -> "CandidateRows":
        """`count` rows whose fields (`CandidateScore`'s, by name) `fields(index)` gives when a
        row is first read; it must hold plain values only (ids, scores, what the view explained),
        never the view: a row may be read on another thread, after the run."""
        rows = cls()
        rows._fields = fields
        rows._rows = [None] * count
        return rows

    def _row(self, index: int) -> CandidateScore:
        row = self._rows[index]
        return row if row is not None else self._built(range(index, index + 1))[0]

    def _built(self, indexes: range) -> list[CandidateScore]:
        """The rows at `indexes`, those not built yet validated together in one pass (a reader
        that iterates reads them all: row by row cost ~45% more than one pass at 200 rows)."""
        missing = [i for i in indexes if self._rows[i] is None]
        if missing:
            assert self._fields is not None  # a row is None only in rows built when read
            # Two readers may build one row at once (the UI and the engine's thread): both build
            # the same row from the same fields, and either result is kept.
            fields = self._fields
            for i, built in zip(missing, _rows_adapter().validate_python([fields(i) for i in missing]), strict=True):
                self._rows[i] = built
        return cast(list[CandidateScore], [self._rows[i] for i in indexes])  # every one is built now

    @overload
    def __getitem__(self, index: int) -> CandidateScore: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[CandidateScore, ...]: ...

    def __getitem__(self, index: int | slice) -> CandidateScore | tuple[CandidateScore, ...]:
        if isinstance(index, slice):
            return tuple(self._built(range(*index.indices(len(self._rows)))))
        return self._row(range(len(self._rows))[index])

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[CandidateScore]:
        return iter(self._built(range(len(self._rows))))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CandidateRows):
            return tuple(self) == tuple(other)
        return isinstance(other, tuple) and tuple(self) == other

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return repr(tuple(self))

    def __reduce__(self) -> tuple[type["CandidateRows"], tuple[tuple[CandidateScore, ...]]]:
        # Pickled or copied as its rows: `fields` may be a closure, which does not pickle.
        return (CandidateRows, (tuple(self),))

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        rows = handler.generate_schema(tuple[CandidateScore, ...])
        from_rows = core_schema.chain_schema([rows, core_schema.no_info_plain_validator_function(cls)])
        return core_schema.json_or_python_schema(
            json_schema=from_rows,
            python_schema=core_schema.union_schema([core_schema.is_instance_schema(cls), from_rows]),
            serialization=core_schema.plain_serializer_function_ser_schema(tuple, return_schema=rows),
        )
