"""Puts a session's retrieval on a cluster: cuts (or finds) the KB's shards, has the workers
build (once) and open them, each its own, in parallel, and gives the session an index cache
that searches them and views whose units are fetched from them."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, cast

from core.infra.config import RetrievalConfig
from core.kb.knowledge_base import KnowledgeBase
from core.kb.sharding import shard_tasks
from core.kb.sharding.cluster import Cluster
from core.kb.sharding.manifest_kb import ManifestKb
from core.kb.sharding.sharded import ShardedIndexCache, ShardSet
from core.kb.sharding.shards import ShardManifest, cut, ensure_shards, find_shards
from core.store import SegmentStore, default_store
from core.units import Caller

if TYPE_CHECKING:
    from core.kernel.session import Session


def shard_session(session: Session, cluster: Cluster, root: Path, shards: int | None = None) -> ShardSet:
    """The session's KB cut into `shards` (default: the cluster config's) under `root`, opened on
    the cluster's workers; the session's BM25 and HDC lanes search them from now on, and the
    units its questions show or explain are fetched from them."""
    count = shards or cluster.config.shards
    folder, manifest = ensure_shards(session.kb, root, count, cluster.config.units_per_file)
    shard_set = _opened(cluster, folder, manifest, session.kb.version, session.retrieval)
    session.use_indexes(partial(ShardedIndexCache, shard_set))
    session.use_views(shard_set.view_of)
    return shard_set


def coordinator_session(
    kb_paths: Sequence[Path],
    config_path: Path,
    cluster: Cluster,
    root: Path,
    shards: int | None = None,
    store: SegmentStore | None = None,
) -> tuple[Session, ShardSet] | None:
    """A session over the KB at `kb_paths` that opens only its shards' manifest (manifest_kb.py):
    the version naming the shard folder is the files' stat digest, found without reading them,
    and everything its questions ask of the KB comes from the shards. A KB with no shards yet is
    cut by a worker (`shards.cut`): this process never reads it. None when the
    config needs the whole view in this process (the dense lane, learned HDC token vectors):
    the caller opens the KB and `shard_session`s it as before."""
    from core.infra.config import load_retrieval_config
    from core.infra.embeddings import load_embedding_config
    from core.kb.dense import DenseLane
    from core.kernel.session import Session

    retrieval = load_retrieval_config(config_path)
    if retrieval.hdc.context_vectors or DenseLane(load_embedding_config(config_path), retrieval.dense).configured:
        return None
    count = shards or cluster.config.shards
    version, files = KnowledgeBase.stat_files(kb_paths)
    folder, manifest = find_shards(root, version, count)
    if manifest is None:  # cut on a worker, which reads the KB at the same paths
        store = store if store is not None else default_store()
        cache = str(store.root) if store.enabled and store.root is not None else None
        where, manifest = cluster.run_once(
            cut,
            [str(Path(path).resolve()) for path in kb_paths],
            str(root.resolve()),
            count,
            cluster.config.units_per_file,
            retrieval,
            cache,
            timeout_ms=int(cluster.config.cut_timeout_s * 1000),
            what="cutting the KB into shards",
        )
        folder, version = Path(where), manifest.kb_digest  # a file changed since it was stated: the cut's
    shard_set = _opened(cluster, folder, manifest, version, retrieval)
    kb_of_manifest = ManifestKb(kb_paths, files, version, manifest, shard_set, store)
    # A Session reads of its KB only what ManifestKb has (views, diagnostics, files, store).
    session = Session(kb_paths, config_path, kb=cast(KnowledgeBase, kb_of_manifest))
    session.use_indexes(partial(ShardedIndexCache, shard_set))
    return session, shard_set


def _opened(
    cluster: Cluster, folder: Path, manifest: ShardManifest, version: str, retrieval: RetrievalConfig
) -> ShardSet:
    """The shards of `folder`, each opened on its worker."""
    folders = tuple(str((folder / name).resolve()) for name in manifest.folders)
    shard_set = ShardSet(cluster, folders, version, retrieval)
    # Each worker builds its shards' index stores (a worker that may not start the store's build
    # pool builds in its own process) and maps them now, not inside a question's timeout.
    cluster.each_shard(
        shard_tasks.warm,
        folders,
        retrieval,
        Caller(),
        cluster.config.open_shards,
        timeout_ms=int(cluster.config.connect_timeout_s * 1000),
    )
    cluster.shared(retrieval)  # now, while every worker answers, not inside a question
    return shard_set
