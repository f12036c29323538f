"""The explorer's cluster (`mrptui --cluster local:N|ADDRESS`): started or reached in the KB's
load worker, never on the UI thread; the session's BM25 and HDC lanes then search the KB's shards
on it (core/kb/sharding/), cut again after each reload (a changed KB gets new shards); closed
when the app quits. A cluster that cannot be started or reached fails the load with one line
naming it, shown in the app like any load problem."""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from core.infra.config import ConfigError
from core.infra.diagnostics import Code, Diagnostic
from core.kb.sharding.cluster import Cluster, ClusterError, ShardUnavailable
from core.kb.sharding.config import ClusterConfig
from mrptui.session_seam import SessionLike


class ClusterLink:
    def __init__(
        self,
        config: ClusterConfig,
        shard_root: Path | None = None,
        connect: Callable[[], Cluster] | None = None,
    ) -> None:
        """`shard_root`: where the shards are cut (None: a temporary folder, removed at `close`).
        `connect`: how the cluster is reached (default: started or reached from `config`'s
        address); a cluster it gives is the caller's to close (tests share one)."""
        self.config = config
        self.spec = config.address or ""
        self._connect = connect
        self._temp: tempfile.TemporaryDirectory[str] | None = None
        self._root = shard_root
        self._cluster: Cluster | None = None
        self._lock = threading.Lock()
        self._closed = False
        self.shards = 0  # shards the open KB is cut into, once attached

    def attach(self, session: SessionLike) -> None:
        """From a worker: the cluster started or reached (once), `session`'s KB cut into shards
        and opened on its workers. Raises ConfigError naming the cluster when that fails."""
        from core.kernel.shard_session import shard_session

        try:
            cluster = self._cluster_now()
            shard_set = shard_session(session, cluster, self._shard_root(), self.config.shards)  # type: ignore[arg-type]
        except (ClusterError, ShardUnavailable) as exc:
            message = str(exc).removeprefix(f"cluster {self.spec}: ")
            raise ConfigError(
                [Diagnostic(code=Code.FILE_UNREADABLE, message=message, file=f"--cluster {self.spec}")]
            ) from None
        self.shards = len(shard_set.folders)

    @property
    def label(self) -> str:
        """What the status line says: "cluster local:2 · 4 shards" (or starting)."""
        if not self.shards:
            return f"cluster {self.spec} · starting…"
        return f"cluster {self.spec} · {self.shards} shard{'' if self.shards == 1 else 's'}"

    def close(self) -> None:
        """The app quits: a cluster this link started or reached is closed (a local one's workers stop)."""
        with self._lock:
            self._closed = True
            cluster, self._cluster = self._cluster, None
        if cluster is not None and self._connect is None:
            cluster.close()
        if self._temp is not None:
            self._temp.cleanup()

    def _cluster_now(self) -> Cluster:
        with self._lock:
            if self._cluster is not None:
                return self._cluster
        cluster = self._connect() if self._connect else Cluster(self.spec, self.config)
        with self._lock:
            if not self._closed:
                self._cluster = cluster
                return cluster
        if self._connect is None:  # the app quit while it started
            cluster.close()
        raise ClusterError("the explorer quit while the cluster started")

    def _shard_root(self) -> Path:
        if self._root is None:
            self._temp = tempfile.TemporaryDirectory(prefix="mrptui-shards-")
            self._root = Path(self._temp.name)
        return self._root
