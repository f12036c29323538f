"""Building the segments of many uncached KB files in worker processes (a cold open).

A cold open is CPU-bound Python (reading, tokenising, HDC encoding) one file at a time, so on a
machine with more than one core the files are spread over a small process pool. Workers do not
send segments back: each builds its file's segment (and, when asked, the file's HDC vector set)
into the cache through the store's ordinary atomic publish, and the opening process then reads
every segment from the cache in file order as on a warm open. The result therefore does not
depend on which worker built what, and any failure (no fork, a worker killed, a cache that
cannot be written) leaves the files unbuilt for the serial path, which builds them as before.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from core.config import HdcConfig
from core.store.store import SegmentStore

# Below this many bytes of files to build, starting workers costs more than it saves.
MIN_POOL_BYTES = 4 << 20
MAX_WORKERS = 4
# A bound on the whole prebuild: past it the remaining files are built serially.
POOL_TIMEOUT_SECONDS = 3600.0
WORKERS_ENV = "MRPTUI_BUILD_WORKERS"


def worker_count() -> int:
    """Cores this process may use (capped), or `MRPTUI_BUILD_WORKERS` (0 or 1: no pool)."""
    configured = os.environ.get(WORKERS_ENV, "").strip()
    if configured.isdigit():
        return min(int(configured), MAX_WORKERS)
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return min(cores, MAX_WORKERS)


def prebuild(
    files: Sequence[Path],
    store: SegmentStore,
    hdc: HdcConfig | None = None,
    *,
    workers: int | None = None,
    min_bytes: int | None = None,
) -> int:
    """Build the uncached `files`' segments into `store`'s cache in parallel; returns how many
    files the workers built (0 when no pool was worth starting or it failed)."""
    workers = worker_count() if workers is None else workers
    min_bytes = MIN_POOL_BYTES if min_bytes is None else min_bytes
    if workers < 2 or not store.enabled or store.root is None:
        return 0
    if len(files) < 2 or sum(map(_size, files)) < min_bytes:
        return 0
    todo = [file for file in files if not store.is_cached(file)]
    if len(todo) < 2 or sum(map(_size, todo)) < min_bytes:
        return 0
    # Largest first, so one big file does not start last and leave the other workers idle.
    todo.sort(key=_size, reverse=True)
    # Imported here: a warm open never starts a pool and should not pay for multiprocessing.
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    try:
        # forkserver: the opening process may run threads (the explorer's), which fork would copy mid-state.
        context = multiprocessing.get_context("forkserver")
        with ProcessPoolExecutor(max_workers=min(workers, len(todo)), mp_context=context) as pool:
            futures = [pool.submit(_build_one, str(store.root), store.max_bytes, str(f), hdc) for f in todo]
            return sum(1 for future in futures if future.result(timeout=POOL_TIMEOUT_SECONDS))
    except Exception:  # noqa: BLE001 - any pool failure falls back to the serial build
        return 0


def _build_one(root: str, max_bytes: int, file: str, hdc: HdcConfig | None) -> bool:
    store = SegmentStore(Path(root), max_bytes)
    segment = store.segment(Path(file))
    if not store.enabled or not segment.key:
        return False
    if hdc is not None and not hdc.context_vectors:
        from core.store.vectors import hdc_segment_vectors

        hdc_segment_vectors(store, segment, hdc)
    return True


def _size(file: Path) -> int:
    try:
        return file.stat().st_size
    except OSError:
        return 0
