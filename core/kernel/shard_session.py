"""Puts a session's retrieval on a cluster: cuts (or finds) the KB's shards, has the workers
build (once) and open them, each its own, in parallel, and gives the session an index cache
that searches them and views whose units are fetched from them."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from core.kb.sharding import shard_tasks
from core.kb.sharding.cluster import Cluster
from core.kb.sharding.sharded import ShardedIndexCache, ShardSet
from core.kb.sharding.shards import ensure_shards
from core.units import Caller

if TYPE_CHECKING:
    from core.kernel.session import Session


def shard_session(session: Session, cluster: Cluster, root: Path, shards: int | None = None) -> ShardSet:
    """The session's KB cut into `shards` (default: the cluster config's) under `root`, opened on
    the cluster's workers; the session's BM25 and HDC lanes search them from now on, and the
    units its questions show or explain are fetched from them."""
    count = shards or cluster.config.shards
    folder, manifest = ensure_shards(session.kb, root, count, cluster.config.units_per_file)
    folders = tuple(str((folder / name).resolve()) for name in manifest.folders)
    shard_set = ShardSet(cluster, folders, session.kb.version, session.retrieval)
    # Each worker builds its shards' index stores (a worker that may not start the store's build
    # pool builds in its own process) and maps them now, not inside a question's timeout.
    cluster.each_shard(
        shard_tasks.warm,
        folders,
        session.retrieval,
        Caller(),
        cluster.config.open_shards,
        timeout_ms=int(cluster.config.connect_timeout_s * 1000),
    )
    cluster.shared(session.retrieval)  # now, while every worker answers, not inside a question
    session.use_indexes(partial(ShardedIndexCache, shard_set))
    session.use_views(shard_set.view_of)
    return shard_set
