"""Building the segments of many uncached KB files in worker processes (a cold open).

A cold open is CPU-bound Python (reading, tokenising, HDC encoding) one file at a time, so on a
machine with more than one core the files are spread over a small process pool. Workers do not
send segments back: each builds its file's segment (and, when asked, its BM25 part over all its
units, core/store/stored.py) into the cache through the store's ordinary atomic publish, and the
opening process then reads every segment from the cache in file order as on a warm open. The
result therefore does not depend on which worker built what, and any failure (no fork, a worker
killed, a cache that cannot be written) leaves the files unbuilt for the serial path, which
builds them as before. What the first answer does not need is made afterwards by niced
daemon processes while the opening process answers: the files' HDC vector sets
(`wait_for_hdc_sets` is what a view's HDC index waits on), then their block tables, which only
a later edit of a file reads (without one, that edit reads the file whole).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from core.infra.cancel import Cancelled
from core.infra.collector import collector_paused
from core.infra.config import Bm25Config, HdcConfig, OverBudget
from core.infra.lifeline import guard_worker, start_forkserver
from core.infra.progress import Estimate, LoadProgress, Progress
from core.store.atomic import TEMP_FOLDER, remove_orphans
from core.store.shared_stems import learn_shared, publish_computed
from core.store.store import SegmentStore

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

    from core.store.segment import Segment

# Below this many bytes of files to build, starting workers costs more than it saves.
MIN_POOL_BYTES = 4 << 20
MAX_WORKERS = 4
# A bound on the whole prebuild: past it the remaining files are built serially.
POOL_TIMEOUT_SECONDS = 3600.0
PROGRESS_TICK_SECONDS = 0.2
WORKERS_ENV = "MRPTUI_BUILD_WORKERS"


def worker_count() -> tuple[int, str | None]:
    """Cores this process may use (capped), or `MRPTUI_BUILD_WORKERS` (0 or 1: no pool), and why
    a value written there is not used (it was ignored silently)."""
    configured = os.environ.get(WORKERS_ENV, "").strip()
    if configured.isascii() and configured.isdigit():  # "²" is a digit int() refuses
        return min(int(configured), MAX_WORKERS), None
    try:
        cores = min(len(os.sched_getaffinity(0)), MAX_WORKERS)
    except (AttributeError, OSError):
        cores = min(os.cpu_count() or 1, MAX_WORKERS)
    if not configured:
        return cores, None
    return cores, (
        f"${WORKERS_ENV}={configured!r} is not a whole number of workers; a cold open builds with "
        f"{cores} (this machine's cores, at most {MAX_WORKERS})"
    )


def prebuild(
    files: Sequence[Path],
    store: SegmentStore,
    hdc: HdcConfig | None = None,
    bm25: Bm25Config | None = None,
    *,
    workers: int | None = None,
    min_bytes: int | None = None,
    progress: Progress | None = None,
    built: Callable[[Path], None] | None = None,
) -> int:
    """Build the uncached `files`' segments into `store`'s cache in parallel; returns how many
    files the workers built (0 when no pool was worth starting or it failed). `progress` hears
    each finished file as a "building" `LoadProgress` with the time left by bytes built (and a
    tick meanwhile); if it (or `built`) raises `Cancelled` or `OverBudget`, the workers are
    stopped and the exception propagates. `built` hears each file a worker has published while the others still build
    (the opening process reads its segment then, instead of after the last file)."""
    if workers is None:
        workers, problem = worker_count()
        if problem is not None:
            store.warn_once(WORKERS_ENV, problem)
    min_bytes = MIN_POOL_BYTES if min_bytes is None else min_bytes
    if workers < 2 or not store.enabled or store.root is None:
        return 0
    if len(files) < 2 or sum(map(_size, files)) < min_bytes:
        return 0
    if not all(map(store.is_recorded, files)):
        # Likely a first open: the fork server imports the build code while the files are hashed.
        start_forkserver()
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
        start_forkserver()
        with (
            _terminated_as_exit(),
            ProcessPoolExecutor(
                max_workers=min(workers, len(todo)), mp_context=context, initializer=guard_worker
            ) as pool,
        ):
            names = tuple(map(str, todo))
            root = str(store.root)
            # Segments and BM25 parts only: the first answer needs them, not the HDC sets.
            futures = {pool.submit(_build_one, root, store.max_bytes, name, bm25): name for name in names}
            try:
                if progress is not None:
                    progress(LoadProgress("building", 0, len(futures)))
                done = _collect(
                    futures,
                    {name: _size(file) for name, file in zip(names, todo)},
                    progress,
                    min(workers, len(todo)),
                    built,
                )
            except BaseException:
                _stop_workers(pool)
                raise
        sets = hdc if hdc is not None and not hdc.context_vectors else None
        _second_pass(context, root, store.max_bytes, done, sets, min(workers, len(done)))
        return len(done)
    except (Cancelled, OverBudget, KeyboardInterrupt, SystemExit):
        # The stopped workers' half-written folders: their writers are gone now.
        remove_orphans(store.root / TEMP_FOLDER)
        raise
    except Exception:  # noqa: BLE001 - any pool failure falls back to the serial build
        return 0


@contextlib.contextmanager
def _terminated_as_exit() -> Iterator[None]:
    """While the pool runs, SIGTERM exits through the `with` blocks (SystemExit, exit status 143)
    instead of at once: the workers are stopped and the pool's queues (five semaphores) are
    released, which a process killed mid-build left to the resource tracker to report as leaked.
    Only from the main thread, where signal handlers live."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _exit_on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _exit_on_term(signum, frame) -> None:
    raise SystemExit(128 + signum)


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """Stop the workers now, mid-file if need be, so a cancelled or interrupted load (the user
    quit, Ctrl+C) does not wait for the files they are building (the `with` exit would); the pool
    then fails every future it still holds (cancelling them first would make Python 3.11's pool
    raise in its own thread). Safe for the cache: a segment is published by an atomic rename, so
    a killed worker leaves at most a temporary folder, which the next open removes (`remove_orphans`)."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.terminate()


def _collect(
    futures: dict[Future, str],
    sizes: dict[str, int],
    progress: Progress | None,
    workers: int,
    built: Callable[[Path], None] | None = None,
) -> list[str]:
    """Wait for the workers (`futures`: each file's build and the file's size). `progress`
    hears each finished file, and is called again every PROGRESS_TICK_SECONDS meanwhile, so a
    caller that cancels by raising from it is heard promptly even while every worker is inside
    a long file. The time left goes by bytes (files are built largest first), from when each
    worker has finished a file. `built` hears each file built while others are still being
    built (the last ones are left to the caller, which reads them next anyway). Returns the
    files built, in `futures`' order."""
    from concurrent.futures import FIRST_COMPLETED, wait

    deadline = time.monotonic() + POOL_TIMEOUT_SECONDS
    estimate = Estimate(sum(sizes.values()), settle=workers)
    pending, done = set(futures), 0
    while pending:
        if time.monotonic() > deadline:
            raise TimeoutError(f"building segments took over {POOL_TIMEOUT_SECONDS:.0f} s")
        finished, pending = wait(pending, timeout=PROGRESS_TICK_SECONDS, return_when=FIRST_COMPLETED)
        done += len(finished)
        if finished:
            estimate.advance(sum(sizes[futures[future]] for future in finished), len(finished))
        if progress is not None:
            progress(LoadProgress("building", done, len(futures), left=estimate.left()))
        if built is not None and pending:
            for future in finished:
                if future.result():
                    built(Path(futures[future]))
    return [name for future, name in futures.items() if future.result()]


def _build_one(root: str, max_bytes: int, file: str, bm25: Bm25Config | None) -> bool:
    """Build one file's segment (and its BM25 part) into the cache. The cyclic collector stays
    off until the segment is dropped: switched back on while the build's few hundred thousand
    objects were still alive, a pass that fell due walked them all (35–45 ms) to free none."""
    with collector_paused():
        return _build_and_drop(root, max_bytes, file, bm25)


def _build_and_drop(root: str, max_bytes: int, file: str, bm25: Bm25Config | None) -> bool:
    # Stems the other worker (or an earlier build) computed are not computed again here.
    learn_shared()
    store = SegmentStore(Path(root), max_bytes, defer_blocks=True)
    segment = store.segment(Path(file))
    publish_computed()
    if not store.enabled or not segment.key:
        return False
    if bm25 is not None:
        from core.store.stored import keep_whole_part

        keep_whole_part(store, segment, bm25)
    return True


# --- the second pass: HDC sets and block tables while the opening process gets to its first answer

# Niceness of the HDC encoders: the opening process (reading the segments, merging BM25, the
# first question) shares the cores with them and should win them (at 5 an encoder gets about a
# third of a contested core: still done soon on a busy machine; at 10, a ninth, it waited minutes).
HDC_NICENESS = 5
# Each store root's HDC encoders, joined by `wait_for_hdc_sets`.
_ENCODERS: dict[str, list] = {}
_ENCODERS_LOCK = threading.Lock()


def _second_pass(context, root: str, max_bytes: int, files: Sequence[str], hdc: HdcConfig | None, workers: int) -> None:
    """Start `workers` daemon processes that encode the built files' HDC vector sets (with `hdc`)
    from their stored segments (the same term ids, so the same sets as encoded beside the
    segment), then add their block tables, and return at once. Daemons: mrptui exits without
    waiting for them (multiprocessing terminates them); a set they did not write is encoded by
    whoever asks for it, and a file whose table they did not add is read whole on its next edit."""
    encoders = []
    for share in range(workers):
        process = context.Process(target=_encode_files, args=(root, max_bytes, files[share::workers], hdc), daemon=True)
        process.start()
        encoders.append(process)
    if hdc is not None:
        with _ENCODERS_LOCK:
            _ENCODERS.setdefault(root, []).extend(encoders)


def wait_for_hdc_sets(root: Path | None, timeout: float = POOL_TIMEOUT_SECONDS) -> None:
    """Wait until the HDC sets a cold open queued for the store at `root` are written (or their
    encoders died), so a view's HDC index reads them instead of encoding them a second time."""
    if root is None:
        return
    with _ENCODERS_LOCK:
        encoders = list(_ENCODERS.get(str(root), ()))
    deadline = time.monotonic() + timeout
    for process in encoders:
        process.join(max(0.0, deadline - time.monotonic()))
    with _ENCODERS_LOCK:
        # Every caller waits for them (not only the first), so none encodes a set a second time.
        running = [process for process in _ENCODERS.get(str(root), ()) if process.is_alive()]
        if running:
            _ENCODERS[str(root)] = running
        else:
            _ENCODERS.pop(str(root), None)


def _encode_files(root: str, max_bytes: int, files: Sequence[str], hdc: HdcConfig | None) -> None:
    guard_worker()
    try:
        os.nice(HDC_NICENESS)
    except OSError:  # not allowed here: the sets are still built, only competing for the cores
        pass
    from core.store.vectors import hdc_segment_vectors

    store = SegmentStore(Path(root), max_bytes)
    if hdc is not None:
        for _, segment in _still_cached(store, files):
            hdc_segment_vectors(store, segment, hdc)
    # Last: no answer reads a block table (a view's HDC index, which joins these processes, waits
    # for them too: ~20 ms a 5,000-unit file).
    for file, segment in _still_cached(store, files):
        store.add_block_table(file, segment)


def _still_cached(store: SegmentStore, files: Sequence[str]) -> Iterator[tuple[Path, Segment]]:
    """The files' stored segments, one at a time, each used with the collector paused; a file
    pruned or edited since the segment pass is skipped (the opening process builds what it needs)."""
    for file in map(Path, files):
        if not store.is_cached(file):
            continue
        with collector_paused():
            segment = store.segment(file)
            if store.enabled and segment.key:
                yield file, segment


def _size(file: Path) -> int:
    try:
        return file.stat().st_size
    except OSError:
        return 0
