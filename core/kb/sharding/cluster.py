"""The connection to a Dask distributed cluster: `local:N` starts N worker processes on this
machine for the life of the command, any other value is a scheduler's address.

Shard i is sent to worker i mod W (its indexes then stay warm there); the scheduler may run it on
another worker when that one dies (every worker reads the same shard folders). A shard that has
not answered within `shardTimeoutMs` is named in a `ShardUnavailable`, never left out silently.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from core.infra.cancel import Cancelled, current, note_shards
from core.kb.sharding.config import ClusterConfig

_LOCAL = re.compile(r"local:(\d{1,4})")


class ClusterError(Exception):
    """The cluster could not be started or reached (the message says which and why)."""


class ShardUnavailable(Exception):
    """One or more shards did not answer in time or failed; a result without them would be partial.
    `missing`: their 0-based numbers; `total`: the shards asked."""

    def __init__(self, reason: str, missing: Sequence[int] = (), total: int = 0):
        super().__init__(reason)
        self.missing = tuple(missing)
        self.total = total


def parse_cluster(spec: str, config: ClusterConfig) -> int | str:
    """`local:N` → N (1 ≤ N ≤ maxLocalWorkers), else the address as given (tcp://host:port)."""
    match = _LOCAL.fullmatch(spec.strip())
    if match:
        workers = int(match.group(1))
        if not 1 <= workers <= config.max_local_workers:
            raise ClusterError(f"local:{workers}: between 1 and {config.max_local_workers} workers")
        return workers
    if spec.startswith("local"):
        raise ClusterError(f"{spec!r}: write local:N (N worker processes) or a scheduler address")
    if not spec.strip():
        raise ClusterError("empty cluster address")
    return spec.strip()


class Cluster:
    """A Dask client, and the local cluster it started if any; close it (or use `with`)."""

    def __init__(self, spec: str, config: ClusterConfig):
        target = parse_cluster(spec, config)
        self.config = config  # a test may swap it for a shorter shard timeout
        self.spec = spec
        self._local = None
        # After a shard failed, questions fail at once for `retryAfterMs` with the same reason,
        # rather than each kb candidate and replan of one request waiting out the timeout again.
        self._down: tuple[float, str, tuple[int, ...]] | None = None
        # Milliseconds each shard's tasks ran on their workers, summed since `take_timings`.
        self._timings: dict[int, float] = {}
        self._timings_lock = threading.Lock()
        self._workers: tuple[float, list[str]] = (0.0, [])
        # id(value) → the value, its future; oldest first, at most `sharedValues` (holding the
        # value keeps its id from being reused while the entry lives).
        self._shared: dict[int, tuple[Any, Any]] = {}
        self._keeps_copies = False
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise ClusterError("--cluster needs Dask distributed: pip install 'mrptui[cluster]'") from None
        try:
            if isinstance(target, int):
                self._local = _local_cluster(LocalCluster, target, config.connect_timeout_s)
                self._client = Client(self._local, timeout=config.connect_timeout_s)
            else:
                self._client = Client(target, timeout=config.connect_timeout_s)
            # The active memory manager drops all but one copy of broadcast data within seconds:
            # a worker that stops while holding the last copy would stall every shard's task.
            self._keeps_copies = not self._client.amm.running()
        except (OSError, TimeoutError, RuntimeError) as exc:
            self.close()
            raise ClusterError(f"cluster {spec}: {exc}") from None

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @property
    def address(self) -> str:
        """The scheduler's address (what another command's `--cluster` names to use this cluster)."""
        return self._client.scheduler.address

    def workers(self) -> list[str]:
        return sorted(self._client.scheduler_info(n_workers=-1)["workers"])

    def _worker_list(self) -> list[str]:
        """The workers, asked of the scheduler at most every `workerListMs`: asking costs a round
        trip, as long as the question's own. A worker gone meanwhile costs nothing (the scheduler
        runs its shard elsewhere); one joined meanwhile gets shards from the next refresh on."""
        fetched, workers = self._workers
        if not workers or time.monotonic() - fetched > self.config.worker_list_ms / 1000:
            workers = self.workers()
            self._workers = (time.monotonic(), workers)
        return workers

    def worker_pids(self) -> dict[str, int]:
        """Each worker's process id (tests stop or kill one)."""
        import os

        return self._client.run(os.getpid)

    def shared(self, value: Any) -> Any:
        """`value` (a config, the rules) put on every worker once; a task given what this returns
        receives the value itself, so a question's tasks do not each carry it again. The
        scheduler copies it to a worker that joins later. While a worker does not answer, or when
        the scheduler keeps only one copy (its active memory manager runs), the value itself is
        returned: each task carries it, so a task rerouted from a stopped or dead worker never
        waits for data held there."""
        if not self._keeps_copies:
            return value
        with self._timings_lock:
            found = self._shared.get(id(value))
        if found is not None and found[0] is value:
            return found[1]
        try:
            future = self._client.scatter(
                value, broadcast=True, hash=False, timeout=self.config.shard_timeout_ms / 1000
            )
        except (OSError, TimeoutError, RuntimeError):
            return value
        with self._timings_lock:
            self._shared[id(value)] = (value, future)
            released = list(self._shared)[: max(0, len(self._shared) - self.config.shared_values)]
            for key in released:
                _, old = self._shared.pop(key)
                old.release()  # the scheduler forgets it, and the workers free their copies
        return future

    def each_shard(
        self, task: Callable[..., Any], shards: Sequence[str], *args: Any, timeout_ms: int | None = None
    ) -> list[Any]:
        """`task(shard, *args)` for every shard, in shard order; raises ShardUnavailable naming the
        shards that did not answer within the timeout (default `shardTimeoutMs`) or failed."""
        timeout = timeout_ms or self.config.shard_timeout_ms
        if self._down is not None and time.monotonic() < self._down[0]:
            note_shards(len(shards), {}, self._down[2])
            raise ShardUnavailable(self._down[1], self._down[2], len(shards))
        workers = self._worker_list()
        if not workers:
            note_shards(len(shards), {}, range(len(shards)))
            raise ShardUnavailable(f"no worker is connected to {self.spec}", range(len(shards)), len(shards))
        futures = [
            self._client.submit(
                _timed, task, shard, *args, workers=[workers[i % len(workers)]], allow_other_workers=True, pure=False
            )
            for i, shard in enumerate(shards)
        ]
        self._wait_cancellable(futures, timeout / 1000)
        missing = [i for i, future in enumerate(futures) if future.status != "finished"]
        if missing:
            # Read before cancelling: a cancelled future no longer says that it failed, nor why.
            reason = _missing_text(missing, futures, len(shards), timeout)
            for future in futures:
                future.cancel()
            self._down = (time.monotonic() + self.config.retry_after_ms / 1000, reason, tuple(missing))
            note_shards(len(shards), {}, missing)
            raise ShardUnavailable(reason, missing, len(shards))
        results = [future.result() for future in futures]
        with self._timings_lock:
            for i, (ms, _) in enumerate(results):
                self._timings[i] = self._timings.get(i, 0.0) + ms
        note_shards(len(shards), {i: ms for i, (ms, _) in enumerate(results)})  # the attempt's trace
        return [value for _, value in results]

    def _wait_cancellable(self, futures: list[Any], timeout_s: float) -> None:
        """Wait for `futures` up to `timeout_s`, in slices of `cancelPollMs`: when the calling
        plugin's token is cancelled meanwhile, the shard tasks are cancelled and `Cancelled`
        raised, rather than the question waiting out the shard timeout for nothing."""
        from distributed import wait

        token = current()
        end = time.monotonic() + timeout_s
        while (left := end - time.monotonic()) > 0:
            try:
                wait(futures, timeout=min(left, self.config.cancel_poll_ms / 1000))
                return
            except TimeoutError:
                pass
            if token.cancelled:
                for future in futures:
                    future.cancel()
                raise Cancelled(token.reason)

    def run_once(self, task: Callable[..., Any], *args: Any, timeout_ms: int, what: str) -> Any:
        """`task(*args)` on one worker (`what` names it); ShardUnavailable when it failed or did
        not finish within `timeout_ms`."""
        future = self._client.submit(task, *args, pure=False)
        self._wait_cancellable([future], timeout_ms / 1000)
        if future.status == "finished":
            return future.result()
        if future.status == "error":
            raise ShardUnavailable(f"{what} failed: {future.exception()}"[:500])
        future.cancel()
        raise ShardUnavailable(f"{what} did not finish within {timeout_ms} ms")

    def take_timings(self) -> dict[int, float]:
        """Per shard (0-based), the ms its tasks ran on workers since the last call."""
        with self._timings_lock:
            taken, self._timings = self._timings, {}
        return taken

    def close(self) -> None:
        client, local = getattr(self, "_client", None), self._local
        self._local = None
        if client is not None:
            client.close()
        if local is not None:
            local.close()


def _local_cluster(local_cluster: Callable[..., Any], workers: int, timeout_s: float) -> Any:
    """A scheduler and `workers` worker processes on loopback, without the active memory manager
    (which would drop the copies `Cluster.shared` puts on every worker). A worker process that
    has not started within `timeout_s` fails the start (else it would be awaited forever)."""
    import dask

    with dask.config.set({"distributed.scheduler.active-memory-manager.start": False}):
        try:
            return _start(local_cluster, workers, timeout_s)
        except Exception as exc:  # distributed fails a start with assorted types (even AssertionError)
            raise ClusterError(
                f"local:{workers}: the workers did not start (timeout {timeout_s:g} s): {exc!r}"
            ) from None


def _start(local_cluster: Callable[..., Any], workers: int, timeout_s: float) -> Any:
    return local_cluster(
        host="127.0.0.1",  # a local cluster listens on loopback only
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        # The scheduler serves its HTTP routes whatever `dashboard` says; None would take port
        # 8787, which a second cluster on the machine (another session, a parallel test) already
        # holds. Any free loopback port, no dashboard on it.
        dashboard_address="127.0.0.1:0",
        scheduler_kwargs={"dashboard": False},
        # logging.CRITICAL: a worker's chatter, and its log of a failed task with the traceback,
        # must not reach the terminal; the coordinator names the failure in one line.
        silence_logs=50,
        death_timeout=timeout_s,
    )


def _timed(task: Callable[..., Any], *args: Any) -> tuple[float, Any]:
    """Runs on the worker: the task's result and how long it ran there."""
    started = time.perf_counter()
    value = task(*args)
    return (time.perf_counter() - started) * 1000, value


def _missing_text(missing: Sequence[int], futures: Sequence[Any], total: int, timeout_ms: int) -> str:
    first = missing[0]
    future = futures[first]
    why = (
        f"failed: {future.exception()!r}"[:300]
        if future.status == "error"
        else f"did not answer within {timeout_ms} ms"
    )
    others = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
    return f"shard {first + 1} of {total} {why}{others}; the result would be incomplete"
