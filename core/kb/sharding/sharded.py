"""Indexes of a view whose BM25 and HDC scans run on the shards of a cluster.

The coordinator keeps the KB view's columns (which ids the caller may see, their roles and
places) and asks the shards for what scales with the KB: statistics and top-k lists, and the
units a question shows or explains, by id, from the caller's view of their shard
(sharded_view.py): it never restores a unit's text from its own KB for a question. What it
explains (a few dozen candidates a question) it computes itself from the fetched unit and the
gathered statistics, with the same arithmetic the shard used. ThinkingDB fetches a question's facts from the
shards and closes them here (sharded_tdb.py); the dense lane runs here.
A view the shards cannot reproduce (one with excluded units, a KB changed since the shards were
cut, learned HDC token vectors) is indexed in this process as before: correct, only not spread.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from core.infra.config import RetrievalConfig
from core.kb.indexes import IndexCache, ViewIndexes
from core.kb.knowledge_base import KBView
from core.kb.sharding import shard_tasks
from core.kb.sharding.cluster import Cluster
from core.kb.sharding.global_bm25 import Bm25Stats, GlobalBm25, local_stats, parts_of
from core.kb.sharding.remote_view import RemoteView
from core.kb.sharding.sharded_view import ShardedView
from core.kb.sharding.shards import shard_of
from core.retrieval.bm25.explain import Bm25Explanation, TermFieldContribution
from core.retrieval.bm25.index import Bm25Index
from core.retrieval.hdc.encoding import HdcQuery, encode_query
from core.retrieval.hdc.index import HdcIndex, feedback_query
from core.retrieval.hdc.unit_cache import UnitVectorCache
from core.retrieval.lanes import top_scores
from core.units import Act, KnowledgeUnit, Role

T = TypeVar("T")

# Queries (distinct terms) whose gathered statistics are kept: a question explains its candidates
# against the statistics its top-k used.
_STATS_KEPT = 8
# One-unit indexes kept for explaining candidates (a trace explains at most 40 a lane).
_UNITS_KEPT = 64
# Callers' views whose fetched units are kept (as many as a KB keeps views).
_VIEWS_KEPT = 8


@dataclass(frozen=True)
class ShardSet:
    """A cluster and the shard folders its workers read."""

    cluster: Cluster
    folders: tuple[str, ...]
    kb_version: str
    retrieval: RetrievalConfig
    _views: OrderedDict[Any, ShardedView] = field(default_factory=OrderedDict, compare=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)

    def view_of(self, view: KBView) -> KBView:
        """The view, its units fetched from the shards when they serve it (else it as it is),
        one per caller's view, so its fetched units serve the caller's next questions."""
        if isinstance(view, ShardedView | RemoteView) or not self.serves(view):
            return view  # a RemoteView's answers come from the shards already
        if view.base is not None:  # a view with current-turn units: they stay here
            return self.view_of(view.base).with_extra(view.extra)
        with self._lock:
            found = self._views.get(view.key)
            if found is None:
                found = self._views[view.key] = ShardedView.over(view, self)
                while len(self._views) > _VIEWS_KEPT:
                    self._views.popitem(last=False)
            self._views.move_to_end(view.key)
        return found

    def each(self, task, view: KBView, *args: Any) -> list[Any]:
        config = self.cluster.shared(self.retrieval)
        return self.cluster.each_shard(task, self.folders, config, view.caller, self.cluster.config.open_shards, *args)

    def serves(self, view: KBView) -> bool:
        """Whether every shard's view for this caller is this view's KB part: a caller's view of
        the KB the shards were cut from, perhaps with current-turn units (scored here)."""
        root = view.base if view.base is not None else view  # not `or`: that would ask len(view)
        key = root.key
        return isinstance(key, tuple) and key[0] == self.kb_version and key[2] == "" and not root.extra


def merge_top(lists: Iterable[Iterable[tuple[str, float]]], k: int) -> list[tuple[str, float]]:
    """The k best of several top-k lists, by score descending then id, as one index ranks them."""
    return sorted((pair for ranked in lists for pair in ranked), key=lambda p: (-p[1], p[0]))[:k]


class _PerUnit(Generic[T]):
    """One-unit indexes of the few candidates a question explains, built from the view's unit."""

    def __init__(self, view: KBView, build: Callable[[KnowledgeUnit], T]):
        self._view = view
        self._build = build
        self._kept: OrderedDict[str, T] = OrderedDict()

    def __call__(self, unit_id: str) -> T:
        found = self._kept.get(unit_id)
        if found is None:
            unit = self._view.get(unit_id)
            if unit is None:
                raise KeyError(unit_id)
            found = self._kept[unit_id] = self._build(unit)
            while len(self._kept) > _UNITS_KEPT:
                self._kept.popitem(last=False)
        return found


class ShardedBm25:
    """The `Bm25Index` query API (top_k, explain, matched_terms) over the shards."""

    def __init__(self, view: KBView, shards: ShardSet, extra: Bm25Index | None):
        self._view = view
        self._shards = shards
        self._extra = extra
        self.config = shards.retrieval.bm25
        self._stats: OrderedDict[tuple[str, ...], Bm25Stats] = OrderedDict()
        self._unit = _PerUnit(view, lambda unit: Bm25Index.build([unit], self.config))

    def __len__(self) -> int:
        return len(self._view)

    def stats(self, terms: Sequence[str]) -> Bm25Stats:
        """Phase one: the query terms' statistics over every shard (and the current-turn units)."""
        key = tuple(dict.fromkeys(terms))
        found = self._stats.get(key)
        if found is None:
            found = Bm25Stats.empty()
            for part in self._shards.each(shard_tasks.bm25_stats, self._view, key):
                found = found.plus(part)
            if self._extra is not None:
                found = found.plus(local_stats(self._extra, key))
            self._stats[key] = found
            while len(self._stats) > _STATS_KEPT:
                self._stats.popitem(last=False)
        return found

    def top_k(self, terms: Sequence[str], preferred_roles: Collection[Role], k: int) -> list[tuple[str, float]]:
        if k <= 0:
            return []
        stats, roles = self.stats(terms), tuple(preferred_roles)
        ranked = self._shards.each(shard_tasks.bm25_top, self._view, tuple(terms), roles, k, stats)
        if self._extra is not None:
            ranked.append(GlobalBm25(parts_of(self._extra), self.config, stats).top_k(terms, roles, k))
        return merge_top(ranked, k)

    def explain(self, terms: Sequence[str], unit_id: str, preferred_roles: Collection[Role]) -> Bm25Explanation:
        one = GlobalBm25([self._unit(unit_id)], self.config, self.stats(terms))
        return one.explain(terms, unit_id, preferred_roles)

    def contributions(self, terms: Sequence[str], unit_id: str) -> list[TermFieldContribution]:
        """`explain(...).contributions` alone, under the gathered statistics."""
        return self.explain(terms, unit_id, ()).contributions

    def contributions_of(self, terms: Sequence[str], unit_ids: Sequence[str]) -> list[list[TermFieldContribution]]:
        """`contributions` of each unit, in `unit_ids` order (`Bm25Index.contributions_of`)."""
        self._view.units_of(unit_ids)  # fetched from their shards together, not one trip each
        return [self.contributions(terms, unit_id) for unit_id in unit_ids]

    def matched_terms(self, terms: Sequence[str], unit_id: str) -> list[str]:
        return self._unit(unit_id).matched_terms(terms, unit_id)


class ShardedHdc:
    """The HDC index API the kb plugins use, each shard scanning its vectors with the same query
    vector and calibration (noise floor and field weights come from the one config)."""

    model = None  # learned token vectors need the whole view: such a view is not sharded

    def __init__(self, view: KBView, shards: ShardSet, vectors: UnitVectorCache, extra: HdcIndex | None):
        self._view = view
        self._shards = shards
        self._extra = extra
        self.config = shards.retrieval.hdc
        self._unit = _PerUnit(view, lambda unit: HdcIndex.build([unit], self.config, vectors))

    def __len__(self) -> int:
        return len(self._view)

    def __contains__(self, unit_id: object) -> bool:
        return unit_id in self._view

    def query(self, tokens: Sequence[str], act: Act) -> HdcQuery:
        return encode_query(tokens, act, self.config)

    def with_feedback(self, query: HdcQuery, unit_ids: Sequence[str]) -> HdcQuery:
        self._view.units_of(unit_ids)  # fetched from their shards together, not one trip each
        return feedback_query(self, query, unit_ids)

    def text_vector(self, unit_id: str):
        return self._unit(unit_id).text_vector(unit_id)

    def best_window(self, query: HdcQuery, unit_id: str) -> tuple[int, float]:
        return self._unit(unit_id).best_window(query, unit_id)

    def field_similarities(self, query: HdcQuery, unit_id: str) -> dict[str, float]:
        return self._unit(unit_id).field_similarities(query, unit_id)

    def pool(self, query: HdcQuery, floor: float, size: int) -> dict[str, float]:
        """The best `size` units at or above `floor` over every shard (core/retrieval/lanes.py)."""
        if query.text is None:
            return {}
        ranked = self._shards.each(shard_tasks.hdc_top, self._view, query, floor, size)
        if self._extra is not None:
            ranked.append(top_scores(self._extra.unit_ids, self._extra.scores(query), floor, size).items())
        return dict(merge_top(ranked, size))


class ShardedViewIndexes(ViewIndexes):
    """A view's indexes with BM25, HDC and ThinkingDB's facts on the shards (dense: here)."""

    def __init__(self, shards: ShardSet, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._shards = shards
        self.shard_count = len(shards.folders)
        self._extra_ids = frozenset(unit.id for unit in self.view.extra)

    def shard_of(self, unit_id: str) -> int | None:
        """The shard (1-based) that holds the unit; None for a current-turn unit (scored here)."""
        return None if unit_id in self._extra_ids else shard_of(unit_id, self.shard_count) + 1

    def _build_bm25(self):  # type: ignore[override]
        extra = Bm25Index.build(self.view.extra, self._config.bm25) if self.view.extra else None
        return ShardedBm25(self.view, self._shards, extra)

    def _build_hdc(self):  # type: ignore[override]
        if self._config.hdc.context_vectors:
            return super()._build_hdc()
        extra = HdcIndex.build(self.view.extra, self._config.hdc, self._vectors) if self.view.extra else None
        return ShardedHdc(self.view, self._shards, self._vectors, extra)

    def _build_tdb(self):  # type: ignore[override]
        from core.kb.sharding.sharded_tdb import ShardedThinkingDB, local_source

        stating = [unit for unit in self.view.extra if unit.relation is not None]
        if self._base is not None and not stating:
            return self._base.tdb.for_members(self.view)
        local = local_source(stating, self._rules) if stating else None
        return ShardedThinkingDB(self._shards, self.view, self._rules, local)


class ShardedIndexCache(IndexCache):
    """`IndexCache` whose views the shards can serve are searched on the cluster."""

    def __init__(self, shards: ShardSet, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.shards = shards

    def _entry(self, view: KBView, base: ViewIndexes | None) -> ViewIndexes:
        if not self.shards.serves(view):
            return super()._entry(view, base)
        view = self.shards.view_of(view)
        return ShardedViewIndexes(
            self.shards, view, self.config, self.rules, self.vectors, base, self.parts, self.dense
        )
