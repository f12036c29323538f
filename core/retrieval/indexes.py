"""Indexes per permitted view, built lazily once per lane and reused across queries.

Keyed by the view's key (KB version + the caller's value, never a string built from it), so a
reload or another caller gets fresh indexes and a query already running keeps the ones it started with.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from core.config import RetrievalConfig
from core.retrieval.bm25 import Bm25Index
from core.retrieval.hdc import HdcIndex, UnitVectorCache
from core.retrieval.thinkingdb import ThinkingDB
from core.rules import RuleSet

if TYPE_CHECKING:
    from core.kb import KBView, ViewKey

T = TypeVar("T")


class ViewIndexes:
    def __init__(self, view: KBView, config: RetrievalConfig, rules: RuleSet, vectors: UnitVectorCache):
        self.view = view
        self._config = config
        self._rules = rules
        self._vectors = vectors
        self._lock = threading.Lock()
        self._built: dict[str, object] = {}

    def _get(self, name: str, build: Callable[[], T]) -> T:
        with self._lock:
            if name not in self._built:
                self._built[name] = build()
            return self._built[name]  # type: ignore[return-value]

    @property
    def bm25(self) -> Bm25Index:
        return self._get("bm25", lambda: Bm25Index.build(self.view.units, self._config.bm25))

    @property
    def hdc(self) -> HdcIndex:
        return self._get("hdc", lambda: HdcIndex.build(self.view.units, self._config.hdc, self._vectors))

    @property
    def tdb(self) -> ThinkingDB:
        return self._get("tdb", lambda: ThinkingDB.build(self.view.units, self._rules))


class IndexCache:
    """A few recent views' indexes; HDC unit vectors are shared across views and invalidated per unit."""

    def __init__(self, config: RetrievalConfig, rules: RuleSet, max_views: int = 4):
        self.config = config
        self.rules = rules
        self._max_views = max_views
        self._entries: OrderedDict[ViewKey, ViewIndexes] = OrderedDict()
        self._vectors = UnitVectorCache()
        self._lock = threading.Lock()

    def for_view(self, view: KBView) -> ViewIndexes:
        with self._lock:
            entry = self._entries.get(view.key)
            if entry is None:
                entry = ViewIndexes(view, self.config, self.rules, self._vectors)
                self._entries[view.key] = entry
                while len(self._entries) > self._max_views:
                    self._entries.popitem(last=False)
            else:
                self._entries.move_to_end(view.key)
            return entry
