"""The HDC scan: the Hamming distance of every stored vector to one query vector.

A scan reads N × 512 bytes per field, so its cost is memory traffic plus numpy's per-call
overhead. Three choices keep it near the read-bandwidth floor (docs/scoring.md, "HDC scan"):

- Rows are processed in chunks whose temporaries (XOR result, per-word popcounts) stay in cache.
- The XOR runs over the chunk as one flat array against the query tiled to the chunk's length:
  broadcasting a 64-word row would call the inner loop once per row.
- Large matrices are split across threads: numpy releases the GIL inside these loops, so the
  chunks of different threads run on different cores.
- A matrix may come in blocks (`RowBlocks`: one per KB file's stored vector set); the threads
  split the rows of all blocks together, so many small blocks scan as fast as one matrix.
- With numba installed (the optional `fast` extra), a scan of `_ROWS_PER_THREAD` rows or more
  loads a compiled kernel in the background (core/retrieval/hdc/kernel.py: one pass, no
  temporaries, ~6× numpy's chunks on one core); scans use it once it is ready, with the same
  chunking by threads. Distances are integers: both paths give the same values.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from threading import Lock
from typing import TYPE_CHECKING

import numpy as np

from core.infra import cancel
from core.retrieval.hdc.vectors import WORDS
from core.retrieval.kernel_gate import KernelGate
from core.retrieval.row_blocks import RowBlocks

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

_CHUNK_ROWS = 1024
# Rows per call of the compiled kernel: ~0.3 ms, so a cancelled scan still stops at once.
_KERNEL_ROWS = 16384
# Below this many rows per thread, handing work to another thread costs more than it saves.
_ROWS_PER_THREAD = 16384
_MAX_THREADS = 4

# Scans of at least this many rows load the compiled kernel in the background (kernel_gate.py).
_KERNEL = KernelGate("core.retrieval.hdc.kernel", "distances", _ROWS_PER_THREAD, name="hdc-kernel-load")

_pool: ThreadPoolExecutor | None = None
_pool_lock = Lock()


def hamming(matrix: np.ndarray | RowBlocks, vector: np.ndarray) -> np.ndarray:
    """Hamming distance of each row of `matrix` (N × WORDS uint64, or blocks of such rows) to
    `vector`, as uint16."""
    blocks = matrix.blocks if isinstance(matrix, RowBlocks) else (matrix,)
    # (rows, where its first row's distance goes, its row count), in row order.
    pieces, at = [], 0
    for block in blocks:
        pieces.append((np.ascontiguousarray(block), at, len(block)))
        at += len(block)
    out = np.empty(at, dtype=np.uint16)
    if at == 0:
        return out
    vector = np.ascontiguousarray(vector, dtype=np.uint64)
    token = cancel.current()
    scan = partial(_scan_compiled, kernel) if (kernel := _KERNEL.kernel_for(at)) is not None else _scan
    threads = min(_threads(), at // _ROWS_PER_THREAD)
    if threads < 2:
        scan(pieces, vector, out, 0, at, token)
        return out
    bounds = np.linspace(0, at, threads + 1).astype(int)
    pool = _executor()
    futures = [pool.submit(scan, pieces, vector, out, int(a), int(b), token) for a, b in zip(bounds, bounds[1:])]
    for future in futures:
        # A cancelled scan raises in its thread; result() re-raises it here, after every thread stopped.
        future.exception()
    for future in futures:
        future.result()
    return out


def _scan(
    pieces: list[tuple[np.ndarray, int, int]],
    vector: np.ndarray,
    out: np.ndarray,
    start: int,
    stop: int,
    token: cancel.CancelToken,
) -> None:
    """Distances of rows [start, stop) of the pieces laid end to end, into `out`."""
    rows = min(stop - start, _CHUNK_ROWS)
    tiled = np.tile(vector, rows)
    xored = np.empty(rows * WORDS, dtype=np.uint64)
    counts = np.empty(rows * WORDS, dtype=np.uint8)
    for block, at, size in pieces:
        flat = block.reshape(-1)
        low, high = max(start, at), min(stop, at + size)
        for first in range(low, high, _CHUNK_ROWS):
            # A scan of a million units takes a while: a cancelled plugin call stops between chunks.
            token.raise_if_cancelled()
            last = min(first + _CHUNK_ROWS, high)
            span = (last - first) * WORDS
            begin = (first - at) * WORDS
            np.bitwise_xor(flat[begin : begin + span], tiled[:span], out=xored[:span])
            np.bitwise_count(xored[:span], out=counts[:span])
            counts[:span].reshape(-1, WORDS).sum(axis=1, dtype=np.uint16, out=out[first:last])


def _scan_compiled(
    kernel: Callable,
    pieces: list[tuple[np.ndarray, int, int]],
    vector: np.ndarray,
    out: np.ndarray,
    start: int,
    stop: int,
    token: cancel.CancelToken,
) -> None:
    """`_scan` by the compiled kernel (core/retrieval/hdc/kernel.py), `_KERNEL_ROWS` rows a call."""
    for block, at, size in pieces:
        low, high = max(start, at), min(stop, at + size)
        mine = out[at : at + size]
        for first in range(low, high, _KERNEL_ROWS):
            token.raise_if_cancelled()
            kernel(block, vector, first - at, min(first + _KERNEL_ROWS, high) - at, mine)


def wait_for_kernel(timeout: float) -> bool:
    """Start loading the compiled kernel, as a big scan does, and wait up to `timeout` s for it
    (benchmarks, which time the path a long-running app has)."""
    _KERNEL.kernel_for(_KERNEL.threshold)
    return _KERNEL.wait_until_loaded(timeout)


def _threads() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not every platform has affinity masks
        cores = os.cpu_count() or 1
    return max(1, min(cores, _MAX_THREADS))


def _executor() -> ThreadPoolExecutor:
    global _pool
    from concurrent.futures import ThreadPoolExecutor  # only a large scan needs threads

    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=_MAX_THREADS, thread_name_prefix="hdc-scan")
        return _pool
