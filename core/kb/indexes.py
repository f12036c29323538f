"""Indexes per permitted view, built lazily once per lane and reused across queries.

Keyed by the view's key (KB version + the caller's value, never a string built from it), so a
reload or another caller gets fresh indexes and a query already running keeps the ones it started with.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, TypeVar, cast

from core.infra.cancel import current
from core.infra.collector import full_collections_paused
from core.infra.config import RetrievalConfig
from core.infra.embeddings import EmbeddingError
from core.kb.dense import DenseIndex, DenseLane
from core.retrieval.bm25.index import Bm25Index
from core.retrieval.bm25.parts import Bm25Parts
from core.retrieval.hdc.unit_cache import UnitVectorCache
from core.retrieval.lanes import bm25_pool
from core.retrieval.rules import RuleSet
from core.store.stored import PartCache
from core.units import Role

if TYPE_CHECKING:
    from core.kb.knowledge_base import KBView, ViewKey
    from core.retrieval.hdc.index import HdcIndex
    from core.retrieval.hdc.side import HdcWithSide
    from core.retrieval.thinkingdb import ThinkingDB

T = TypeVar("T")
# BM25 pools a view keeps, newest first: enough for one question's plugin calls.
RECENT_BM25_POOLS = 4


class ViewIndexes:
    """A view's indexes; a view extended by current-turn units scores BM25 over its base view's
    index plus a side index of those units (see `Bm25Parts`), never by re-indexing the KB."""

    def __init__(
        self,
        view: KBView,
        config: RetrievalConfig,
        rules: RuleSet,
        vectors: UnitVectorCache,
        base: ViewIndexes | None = None,
        parts: PartCache | None = None,
        dense: DenseLane | None = None,
    ):
        self.view = view
        self._base = base
        self._parts = parts if parts is not None else PartCache()
        self._config = config
        self._rules = rules
        self._vectors = vectors
        self._dense = dense
        # One lock per index: building one (HDC takes seconds at a million units) must not make a
        # question wait for another that is already built (BM25, ThinkingDB).
        self._lock = threading.Lock()  # guards `_built` and `_building`, held only briefly
        self._building: dict[str, threading.Lock] = {}
        self._built: dict[str, object] = {}
        self._pools: OrderedDict[tuple, tuple[object, tuple[tuple[str, float], ...]]] = OrderedDict()

    @property
    def dense_lane(self) -> DenseLane | None:
        return self._dense

    def _get(self, name: str, build: Callable[[], T]) -> T:
        with self._lock:
            if name in self._built:
                return self._built[name]  # type: ignore[return-value]
            building = self._building.setdefault(name, threading.Lock())
        # The view's first query pays for the build, not the plugin that asked: its
        # pluginTimeoutMs does not run meanwhile (the request's deadline does; core/infra/cancel.py).
        with current().paused(f"{name} index build"), building:
            # A second caller waits for the first build instead of repeating it.
            with self._lock:
                if name in self._built:
                    return self._built[name]  # type: ignore[return-value]
            index = build()
            with self._lock:
                self._built[name] = index
            return index

    # The shards this view's KB is searched on (core/kb/sharding): none in one process.
    shard_count = 0

    def shard_of(self, unit_id: str) -> int | None:
        """The shard (1-based) that holds the unit, None in one process (as here)."""
        return None

    def has(self, name: str) -> bool:
        """Whether the named index ("bm25", "hdc", "tdb") is built already."""
        with self._lock:
            return name in self._built

    @property
    def bm25(self) -> Bm25Index | Bm25Parts:
        return self._get("bm25", self._build_bm25)

    def _build_bm25(self) -> Bm25Index | Bm25Parts:
        config = self._config.bm25
        if self._base is not None:
            base = self._base.bm25
            base_parts = base.parts if isinstance(base, Bm25Parts) else [base]
            return Bm25Parts([*base_parts, Bm25Index.build(self.view.extra, config)], config)
        merged = self.view.merged_bm25(config, build=False, cache=self._parts)
        if merged is not None:
            return merged
        parts = self.view.bm25_parts(config, self._parts)
        return Bm25Index.build(self.view.units, config) if parts is None else Bm25Parts(parts, config)

    def bm25_pool(self, terms: Sequence[str], preferred_roles: Collection[Role], pool: int) -> dict[str, float]:
        """`lanes.bm25_pool` over this view's index, kept for its last few queries: a question
        re-planned from kb-fast to kb-thinkingdb asks for the same pool again (20 of 50 questions
        of the 100k benchmark). A pool is reused only from the index that ranked it, and never
        from a cluster's, whose every search is reported per shard in the call's trace."""
        index = self.bm25
        if not isinstance(index, Bm25Index | Bm25Parts):
            return bm25_pool(index, terms, preferred_roles, pool)
        key = (tuple(terms), tuple(preferred_roles), pool)
        with self._lock:
            kept = self._pools.get(key)
        if kept is not None and kept[0] is index:
            return dict(kept[1])
        ranked = bm25_pool(index, terms, preferred_roles, pool)
        with self._lock:
            self._pools[key] = (index, tuple(ranked.items()))
            self._pools.move_to_end(key)
            while len(self._pools) > RECENT_BM25_POOLS:
                self._pools.popitem(last=False)
        return ranked

    def merge_bm25(self) -> None:
        """Replace per-file BM25 parts by one merged index (built and saved once per view), which
        answers top-k faster; queries already holding the parts finish on them."""
        parts = self.bm25
        if not isinstance(parts, Bm25Parts):
            return
        merged = self.view.merged_bm25(self._config.bm25, build=True, cache=self._parts)
        if merged is not None:
            with self._lock:
                self._built["bm25"] = merged

    @property
    def hdc(self) -> HdcIndex | HdcWithSide:
        return self._get("hdc", self._build_hdc)

    def _build_hdc(self) -> HdcIndex | HdcWithSide:
        """From the vectors the index store keeps per KB file (core/store/vectors.py); units no
        stored file holds (without a cache) from the in-memory cache. A view extended by
        current-turn units scores them in a side index beside its base view's index, unless
        learned token vectors (which depend on every unit) need a build over the whole view."""
        # Imported here: most questions never escalate to HDC, and a CLI `ask` should not load it.
        from core.retrieval.hdc.encoding import learn_model
        from core.retrieval.hdc.index import HdcIndex
        from core.retrieval.hdc.side import HdcWithSide

        config, units = self._config.hdc, self.view.units
        rows = getattr(units, "rows", None)
        if self._base is not None and not config.context_vectors and rows is not None:
            # A base view is never itself extended (`KBView.with_extra`): its index is a plain one.
            return HdcWithSide.of(cast("HdcIndex", self._base.hdc), rows, self.view.extra, self._vectors)
        from core.store.vectors import hdc_vectors  # only an HDC build reads or writes stored vectors

        # A build that encodes units keeps the view's sentences and words alive while it runs (at
        # 100k with nothing stored, ~400k objects for a minute in the explorer's warm-up): each
        # full collection meanwhile walked them all, ~0.1 CPU s with the interpreter's lock held,
        # a dozen times, and a key pressed then waited for it (issue 41).
        with full_collections_paused():
            model = learn_model(units, config)
            topic, claim, counts, order = hdc_vectors(self.view.stored, units, config, model, self._vectors)
            return HdcIndex.from_vectors(units, config, topic, claim, counts, model, order)

    @property
    def dense(self) -> DenseIndex:
        """The view's dense index; raises EmbeddingError when there is no usable endpoint (not
        cached then, so the next query tries again once the endpoint is back)."""
        lane = self._dense
        if lane is None:
            raise EmbeddingError("no embeddings endpoint configured (config/embeddings.json baseUrl)")
        index = self._get("dense", lambda: lane.build(self.view.units, self.view.stored))
        if index.stale:  # the endpoint changed dimension and the stored vectors were dropped
            with self._lock:
                self._built.pop("dense", None)
            index = self._get("dense", lambda: lane.build(self.view.units, self.view.stored))
        return index

    @property
    def tdb(self) -> ThinkingDB:
        return self._get("tdb", self._build_tdb)

    def _build_tdb(self) -> ThinkingDB:
        # Only a ThinkingDB question pays for importing it; the BM25 and HDC profiles never do.
        from core.retrieval.thinkingdb import ThinkingDB

        # Current-turn units that state no fact change no fact: the base view's facts and
        # indexes serve, answering "is it here" for this view (equal to a build over it).
        if self._base is not None and not any(unit.relation is not None for unit in self.view.extra):
            return self._base.tdb.for_members(self.view)
        # Only units that state a fact are restored; the view answers "is it here" for the rest.
        return ThinkingDB.build(self.view.fact_units(), self._rules, self.view)


class IndexCache:
    """A few recent views' indexes; HDC unit vectors are shared across views and invalidated per unit."""

    def __init__(
        self,
        config: RetrievalConfig,
        rules: RuleSet,
        max_views: int = 4,
        vectors: UnitVectorCache | None = None,
        parts: PartCache | None = None,
        dense: DenseLane | None = None,
    ):
        self.config = config
        self.rules = rules
        self.dense = dense
        self._max_views = max_views
        self._entries: OrderedDict[ViewKey, ViewIndexes] = OrderedDict()
        self.vectors = vectors if vectors is not None else UnitVectorCache()
        self.parts = parts if parts is not None else PartCache()
        self._lock = threading.Lock()

    def for_view(self, view: KBView) -> ViewIndexes:
        base = self.for_view(view.base) if view.base is not None else None
        with self._lock:
            entry = self._entries.get(view.key)
            if entry is None:
                entry = self._entry(view, base)
                self._entries[view.key] = entry
                while len(self._entries) > self._max_views:
                    self._entries.popitem(last=False)
            else:
                self._entries.move_to_end(view.key)
            return entry

    def _entry(self, view: KBView, base: ViewIndexes | None) -> ViewIndexes:
        """A new view's indexes (a sharded cache makes its own: core/kb/sharding/sharded.py)."""
        return ViewIndexes(view, self.config, self.rules, self.vectors, base, self.parts, self.dense)
