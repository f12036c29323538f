"""`--cluster local:N | ADDRESS`: a command's BM25 and HDC lanes run on the shards of a Dask
cluster (core/distributed/). Without it nothing changes."""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from core.distributed.config import ClusterConfig
from mrptui.commands import UsageError, cache_folder


def add_cluster_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cluster",
        metavar="local:N|ADDRESS",
        help="search the KB's shards on a Dask cluster: local:N starts N worker processes for this command",
    )
    shards = ClusterConfig.model_fields["shards"]
    parser.add_argument("--shards", type=int, metavar="N", help=f"shards to cut the KB into (default {shards.default})")
    parser.add_argument(
        "--shard-dir",
        metavar="DIR",
        help="where the shards are cut (every worker must read it); default: the index cache's shards/",
    )


def cluster_config(args: argparse.Namespace) -> ClusterConfig | None:
    """The cluster options checked (None without --cluster): called before the KB opens, so a bad
    value costs nothing."""
    spec = getattr(args, "cluster", None)
    if not spec:
        if getattr(args, "shards", None) is not None or getattr(args, "shard_dir", None):
            raise UsageError("--shards and --shard-dir need --cluster")
        return None
    from pydantic import ValidationError

    from core.distributed.cluster import ClusterError, parse_cluster

    try:
        config = ClusterConfig(**({"shards": args.shards} if args.shards is not None else {}))
        parse_cluster(spec, config)
    except ValidationError as exc:
        raise UsageError(f"--shards: {exc.errors()[0]['msg']}") from None
    except ClusterError as exc:
        raise UsageError(f"--cluster {exc}") from None
    return config


@contextmanager
def on_cluster(args: argparse.Namespace, session) -> Iterator[Callable[[], dict] | None]:
    """For the command's life: the cluster started or reached, the session's KB sharded on it.
    Yields what `--json` adds as "cluster" (call it after the run), or None without --cluster."""
    config = cluster_config(args)
    if config is None:
        yield None
        return
    from core.distributed.cluster import Cluster, ClusterError, ShardUnavailable
    from core.distributed.coordinator import shard_session

    with _shard_root(args) as root:
        try:
            cluster = Cluster(args.cluster, config)
        except ClusterError as exc:
            raise UsageError(str(exc)) from None
        with cluster:
            try:
                shards = shard_session(session, cluster, root)
            except ShardUnavailable as exc:
                raise UsageError(f"--cluster {args.cluster}: {exc}") from None
            cluster.take_timings()  # the warm-up is not the question's

            def report() -> dict:
                timings = cluster.take_timings()
                return {
                    "cluster": args.cluster,
                    "workers": len(cluster.workers()),
                    "shards": len(shards.folders),
                    "shard_ms": [round(timings.get(i, 0.0), 3) for i in range(len(shards.folders))],
                }

            yield report


@contextmanager
def _shard_root(args: argparse.Namespace) -> Iterator[Path]:
    if args.shard_dir:
        yield Path(args.shard_dir)
        return
    cache = cache_folder(args)
    if cache is not None:
        yield cache / "shards"
        return
    with tempfile.TemporaryDirectory(prefix="mrptui-shards-") as temp:
        yield Path(temp)
