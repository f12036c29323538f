"""HDC over a view extended by a request's current-turn units: the base view's index plus a side
index of those units, never a build over the extended view (at 1M units that copied every
vector per request).

A unit's HDC score depends only on its own vectors and the query, so scoring each index and
putting the side's scores at the extended view's positions of its units gives the scores a
build over the extended view gives, in the same row order (which breaks ties in the lane's
pool). Learned token vectors (`contextVectors`) depend on every unit of the view, so a view
that learns them is built whole instead (`ViewIndexes`).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np

from core.infra.config import HdcConfig
from core.retrieval.hdc.encoding import HdcQuery, encode_query
from core.retrieval.hdc.index import HdcIndex, feedback_query
from core.retrieval.hdc.unit_cache import UnitVectorCache
from core.units import Act, KnowledgeUnit


class HdcWithSide:
    """The `HdcIndex` interface over `base` (the base view's rows) and `side` (the current-turn
    units), whose rows sit at `at` (ascending positions in the extended view)."""

    def __init__(self, base: HdcIndex, side: HdcIndex, at: np.ndarray):
        self.base = base
        self.side = side
        self.config: HdcConfig = base.config
        self.model = None
        self._at = at
        # Extra j goes before base row at[j] - j (np.insert's index into the base rows).
        self._insert = at - np.arange(len(at))
        self.unit_ids: Sequence[str] = _MergedIds(base.unit_ids, side.unit_ids, at.tolist(), self._insert.tolist())

    @classmethod
    def of(
        cls, base: HdcIndex, rows: np.ndarray, extra: Sequence[KnowledgeUnit], cache: UnitVectorCache
    ) -> HdcWithSide:
        """`rows` are the extended view's rows (-1-k for `extra[k]`, core/kb/view.py)."""
        at = np.flatnonzero(rows < 0)
        side_units = [extra[-1 - int(row)] for row in rows[at].tolist()]
        return cls(base, HdcIndex.build(side_units, base.config, cache), at)

    def __len__(self) -> int:
        return len(self.base) + len(self.side)

    def __contains__(self, unit_id: object) -> bool:
        return unit_id in self.side or unit_id in self.base

    def _part(self, unit_id: str) -> HdcIndex:
        return self.side if unit_id in self.side else self.base

    def query(self, tokens: Sequence[str], act: Act) -> HdcQuery:
        return encode_query(tokens, act, self.config)

    def with_feedback(self, query: HdcQuery, unit_ids: Sequence[str]) -> HdcQuery:
        return feedback_query(self, query, unit_ids)

    def text_vector(self, unit_id: str) -> np.ndarray:
        return self._part(unit_id).text_vector(unit_id)

    def best_window(self, query: HdcQuery, unit_id: str) -> tuple[int, float]:
        return self._part(unit_id).best_window(query, unit_id)

    def field_similarities(self, query: HdcQuery, unit_id: str) -> dict[str, float]:
        return self._part(unit_id).field_similarities(query, unit_id)

    def scores(self, query: HdcQuery) -> np.ndarray:
        """Every unit's score in the extended view's row order."""
        return np.insert(self.base.scores(query), self._insert, self.side.scores(query))


class _MergedIds(Sequence[str]):
    """The extended view's unit ids without copying the base's list: position i is the side's
    unit j when `at[j] == i`, else the base's row i minus the side units before it."""

    def __init__(self, base: Sequence[str], side: Sequence[str], at: list[int], insert: list[int]):
        self._base = base
        self._side = side
        self._at = at
        self._insert = insert
        self._side_row = {uid: j for j, uid in enumerate(side)}

    def __len__(self) -> int:
        return len(self._base) + len(self._side)

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        j = bisect.bisect_left(self._at, index)
        if j < len(self._at) and self._at[j] == index:
            return self._side[j]
        return self._base[index - j]

    def index(self, value, start: int = 0, stop: int | None = None) -> int:  # type: ignore[override]
        j = self._side_row.get(value)
        if j is not None:
            found = self._at[j]
        else:
            row = self._base.index(value)
            found = row + bisect.bisect_right(self._insert, row)
        if found < start or (stop is not None and found >= stop):
            raise ValueError(f"{value!r} is not in the list")
        return found
