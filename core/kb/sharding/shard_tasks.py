"""What a worker runs for one shard: each function opens the shard once per process (its KB and
indexes stay in the worker's memory, the index files mapped), applies the caller's view before
anything is ranked, and returns ids and scores only, or the units the coordinator asks for by id
that the caller's view of the shard holds (nothing of any other).

Module-level functions: Dask sends them to workers by reference, and the shard by its folder.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

from core.infra.config import RetrievalConfig
from core.kb.indexes import IndexCache, ViewIndexes
from core.kb.knowledge_base import KnowledgeBase
from core.kb.sharding.fact_source import FactReply, FactSource
from core.kb.sharding.global_bm25 import Bm25Stats, GlobalBm25, local_stats, parts_of
from core.kb.sharding.origins import ShardOrigins
from core.kb.sharding.shards import open_shard
from core.retrieval.hdc.encoding import HdcQuery
from core.retrieval.lanes import top_scores
from core.retrieval.rules import RuleSet
from core.retrieval.thinkingdb import ThinkingDB
from core.units import Caller, KnowledgeUnit, Role

_OPEN: OrderedDict[tuple[str, str], tuple[KnowledgeBase, ShardOrigins, IndexCache]] = OrderedDict()
_OPEN_LOCK = threading.Lock()
_FACTS: OrderedDict[tuple[str, object, str], FactSource] = OrderedDict()


def _open(folder: str, config: RetrievalConfig, open_shards: int) -> tuple[KnowledgeBase, ShardOrigins, IndexCache]:
    """The shard, opened once per worker process; the least recently used of more than
    `open_shards` is closed."""
    key = (folder, config.model_dump_json())
    with _OPEN_LOCK:
        found = _OPEN.get(key)
        if found is None:
            found = _OPEN[key] = (*open_shard(Path(folder), config), IndexCache(config, RuleSet()))
            while len(_OPEN) > open_shards:
                _OPEN.popitem(last=False)
        _OPEN.move_to_end(key)
    return found


def _indexes(folder: str, config: RetrievalConfig, caller: Caller, open_shards: int) -> ViewIndexes:
    """The shard's indexes for the caller's view."""
    kb, _, cache = _open(folder, config, open_shards)
    return cache.for_view(kb.view(caller))


def _facts(folder: str, config: RetrievalConfig, caller: Caller, open_shards: int, rules: RuleSet) -> FactSource:
    """The shard's facts in the caller's view under the coordinator's rules (which decide the
    facts a walk follows), built once per view and rules; as many kept as shards are open."""
    view = _indexes(folder, config, caller, open_shards).view
    key = (folder, view.key, repr((rules.rules, rules.limits)))
    with _OPEN_LOCK:
        found = _FACTS.get(key)
    if found is None:
        units = view.fact_units()
        found = FactSource(ThinkingDB.build(units, rules, view), units)
        with _OPEN_LOCK:
            _FACTS[key] = found
            while len(_FACTS) > open_shards:
                _FACTS.popitem(last=False)
    return found


def warm(folder: str, config: RetrievalConfig, caller: Caller, open_shards: int) -> int:
    """Opens the shard (building its index store if need be) and its caller's BM25; its unit count."""
    indexes = _indexes(folder, config, caller, open_shards)
    return len(indexes.bm25)


def bm25_stats(
    folder: str, config: RetrievalConfig, caller: Caller, open_shards: int, terms: Sequence[str]
) -> Bm25Stats:
    return local_stats(_indexes(folder, config, caller, open_shards).bm25, terms)


def bm25_top(
    folder: str,
    config: RetrievalConfig,
    caller: Caller,
    open_shards: int,
    terms: Sequence[str],
    roles: Sequence[Role],
    k: int,
    stats: Bm25Stats,
) -> list[tuple[str, float]]:
    index = _indexes(folder, config, caller, open_shards).bm25
    return GlobalBm25(parts_of(index), config.bm25, stats).top_k(terms, roles, k)


def hdc_top(
    folder: str, config: RetrievalConfig, caller: Caller, open_shards: int, query: HdcQuery, floor: float, pool: int
) -> list[tuple[str, float]]:
    index = _indexes(folder, config, caller, open_shards).hdc
    return list(top_scores(index.unit_ids, index.scores(query), floor, pool).items())


def tdb_seeds(
    folder: str,
    config: RetrievalConfig,
    caller: Caller,
    open_shards: int,
    rules: RuleSet,
    text: str,
    preferred: Sequence[str],
    keys: Sequence[str],
) -> FactReply:
    return _facts(folder, config, caller, open_shards, rules).seeds(text, preferred, keys)


def tdb_hop(
    folder: str,
    config: RetrievalConfig,
    caller: Caller,
    open_shards: int,
    rules: RuleSet,
    subjects: Sequence[str],
    limit: int,
    keys: Sequence[str],
) -> FactReply:
    return _facts(folder, config, caller, open_shards, rules).hop(subjects, limit, keys)


def units(
    folder: str, config: RetrievalConfig, caller: Caller, open_shards: int, unit_ids: Sequence[str]
) -> list[KnowledgeUnit]:
    """The units of `unit_ids` that the caller's view of this shard holds, each with its first
    place in the KB; an id the view does not hold (another shard's, or one the caller may not
    see) is left out, indistinguishably."""
    kb, origins, _ = _open(folder, config, open_shards)
    view = kb.view(caller)
    found = []
    for unit_id in unit_ids:
        row = view.row_of(unit_id)
        if row is not None:
            unit = view.table.unit(row)
            found.append(unit.model_copy(update={"location": origins.location(row)}))
    return found


def describe(folder: str, config: RetrievalConfig, caller: Caller, open_shards: int) -> tuple[int, str]:
    """The caller's view of this shard: how many units it holds, and its version."""
    kb, _, _ = _open(folder, config, open_shards)
    view = kb.view(caller)
    return len(view), view.version


def roles(
    folder: str, config: RetrievalConfig, caller: Caller, open_shards: int, unit_ids: Sequence[str]
) -> dict[str, Role]:
    """The role of each of `unit_ids` that the caller's view of this shard holds (no other id)."""
    kb, _, _ = _open(folder, config, open_shards)
    found, _ = kb.view(caller).roles_of(unit_ids)
    return {unit_id: role for unit_id, role in found.items() if role is not None}


def file_order(
    folder: str, config: RetrievalConfig, caller: Caller, open_shards: int, file: str
) -> list[tuple[int, int, str]]:
    """(line, column, id) of each unit first read from KB file `file` that the caller's view of
    this shard holds: the coordinator merges the shards' lists into the file's reading order."""
    kb, origins, _ = _open(folder, config, open_shards)
    view = kb.view(caller)
    ids = view.table.ids
    return [
        (origins.line[row], origins.col[row], ids[row]) for row in origins.rows_in(file) if view.row_of(ids[row]) == row
    ]


def files_seen(folder: str, config: RetrievalConfig, caller: Caller, open_shards: int) -> tuple[set[str], set[str]]:
    """The KB files this shard's restricted units were read from, and those its units in the
    caller's view were read from (a caller's diagnostics leave out files only of the first)."""
    kb, origins, _ = _open(folder, config, open_shards)
    view = kb.view(caller)
    return origins.files_of(view.table.restricted_rows().tolist()), origins.files_of(view.rows.tolist())
