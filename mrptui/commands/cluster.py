"""`--cluster local:N | ADDRESS`: a command's BM25 and HDC lanes run on the shards of a Dask
cluster (core/kb/sharding/). Without it nothing changes."""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.infra.resources import config_dir
from core.kb.sharding import CONFIG_FILE
from mrptui.commands import UsageError, cache_folder, cache_store, config_from_args, kb_paths, open_session

if TYPE_CHECKING:
    from core.kb.sharding.config import ClusterConfig


def cluster_config(args: argparse.Namespace) -> ClusterConfig | None:
    """The cluster options and the config's `cluster.json` checked (None: no cluster), before the
    KB opens, so a bad value costs nothing. `--cluster` wins over the file's address."""
    if not _asks_for_cluster(args):
        return None
    from pydantic import ValidationError

    from core.infra.config import ConfigError
    from core.kb.sharding.cluster import ClusterError, parse_cluster
    from core.kb.sharding.config import ClusterConfig, load_cluster_config

    try:
        config = load_cluster_config(config_from_args(args))
    except ConfigError as exc:
        raise UsageError("\n".join(d.format() for d in exc.diagnostics)) from None
    spec = getattr(args, "cluster", None) or config.address
    if not spec:
        if getattr(args, "shards", None) is not None or getattr(args, "shard_dir", None):
            raise UsageError("--shards and --shard-dir need --cluster")
        return None
    try:
        shards = getattr(args, "shards", None)
        chosen = {"address": spec, **({"shards": shards} if shards is not None else {})}
        config = ClusterConfig.model_validate({**config.model_dump(), **chosen})
        parse_cluster(spec, config)
    except ValidationError as exc:
        raise UsageError(f"--shards: {exc.errors()[0]['msg']}") from None
    except ClusterError as exc:
        raise UsageError(f"--cluster {exc}") from None
    return config


def _asks_for_cluster(args: argparse.Namespace) -> bool:
    """A cluster option given, or a `cluster.json` in the config folder. Without either there is no
    cluster, and a command imports neither the settings model nor the cluster code (issue 41)."""
    if any(getattr(args, name, None) is not None for name in ("cluster", "shards", "shard_dir")):
        return True
    return ((config_from_args(args) or config_dir()) / CONFIG_FILE).exists()


@contextmanager
def session_on_cluster(args: argparse.Namespace) -> Iterator[tuple[Any, Callable[[], dict] | None]]:
    """For the command's life: its session, and (with --cluster) the cluster started or reached
    with the KB's shards on it, the session opening only their manifest (it reads the KB only to
    cut shards it has none of: core/kernel/shard_session.py). Yields the session and what
    `--json` adds as "cluster" (call it after the run), or None without --cluster."""
    config = cluster_config(args)
    if config is None:
        yield open_session(args), None
        return
    from core.infra.config import ConfigError
    from core.infra.resources import sample_kb_dir
    from core.kb.sharding.cluster import Cluster, ClusterError, ShardUnavailable
    from core.kb.sharding.shards import ShardError
    from core.kernel.shard_session import coordinator_session, shard_session

    paths = kb_paths(args) or [sample_kb_dir()]
    with _shard_root(args) as root:
        try:
            cluster = Cluster(config.address or "", config)
        except ClusterError as exc:
            raise UsageError(str(exc)) from None
        with cluster:
            try:
                opened = coordinator_session(
                    paths, config_from_args(args) or config_dir(), cluster, root, store=cache_store(args)
                )
                if opened is None:  # the config needs the whole view here: the KB opens as before
                    session = open_session(args)
                    opened = session, shard_session(session, cluster, root)
            except ConfigError as exc:
                raise UsageError("\n".join(d.format() for d in exc.diagnostics)) from None
            except (ShardUnavailable, ShardError) as exc:
                raise UsageError(f"--cluster {config.address}: {exc}") from None
            session, shards = opened
            cluster.take_timings()  # the warm-up is not the question's

            def report() -> dict:
                timings = cluster.take_timings()
                return {
                    "cluster": config.address,
                    "workers": len(cluster.workers()),
                    "shards": len(shards.folders),
                    "shard_ms": [round(timings.get(i, 0.0), 3) for i in range(len(shards.folders))],
                }

            try:
                yield session, report
            except ShardUnavailable as exc:  # asked before the run (the view's size, version,
                # the caller's diagnostics): named as the warm-up names it, never a traceback
                raise UsageError(f"--cluster {config.address}: {exc}") from None


@contextmanager
def _shard_root(args: argparse.Namespace) -> Iterator[Path]:
    root = shard_root(args)
    if root is not None:
        yield root
        return
    with tempfile.TemporaryDirectory(prefix="mrptui-shards-") as temp:
        yield Path(temp)


def shard_root(args: argparse.Namespace) -> Path | None:
    """--shard-dir, else the index cache's shards/ (None: no cache; the caller makes a temporary one)."""
    if getattr(args, "shard_dir", None):
        return Path(args.shard_dir)
    cache = cache_folder(args)
    return cache / "shards" if cache is not None else None
