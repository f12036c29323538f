"""The HDC scan: the Hamming distance of every stored vector to one query vector.

A scan reads N × 512 bytes per field, so its cost is memory traffic plus numpy's per-call
overhead. Three choices keep it near the read-bandwidth floor (docs/scoring.md, "HDC scan"):

- Rows are processed in chunks whose temporaries (XOR result, per-word popcounts) stay in cache.
- The XOR runs over the chunk as one flat array against the query tiled to the chunk's length:
  broadcasting a 64-word row would call the inner loop once per row.
- Large matrices are split across threads: numpy releases the GIL inside these loops, so the
  chunks of different threads run on different cores.
"""

from __future__ import annotations

import os
from threading import Lock
from typing import TYPE_CHECKING

import numpy as np

from core import cancel
from core.retrieval.hdc_vectors import WORDS

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

_CHUNK_ROWS = 1024
# Below this many rows per thread, handing work to another thread costs more than it saves.
_ROWS_PER_THREAD = 16384
_MAX_THREADS = 4

_pool: ThreadPoolExecutor | None = None
_pool_lock = Lock()


def hamming(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """Hamming distance of each row of `matrix` (N × WORDS uint64) to `vector`, as uint16."""
    n = len(matrix)
    out = np.empty(n, dtype=np.uint16)
    if n == 0:
        return out
    flat = np.ascontiguousarray(matrix).reshape(-1)
    token = cancel.current()
    threads = min(_threads(), n // _ROWS_PER_THREAD)
    if threads < 2:
        _scan(flat, vector, out, 0, n, token)
        return out
    bounds = np.linspace(0, n, threads + 1).astype(int)
    pool = _executor()
    futures = [pool.submit(_scan, flat, vector, out, int(a), int(b), token) for a, b in zip(bounds, bounds[1:])]
    for future in futures:
        # A cancelled scan raises in its thread; result() re-raises it here, after every thread stopped.
        future.exception()
    for future in futures:
        future.result()
    return out


def _scan(flat: np.ndarray, vector: np.ndarray, out: np.ndarray, start: int, stop: int, token: cancel.CancelToken) -> None:
    rows = min(stop - start, _CHUNK_ROWS)
    tiled = np.tile(vector, rows)
    xored = np.empty(rows * WORDS, dtype=np.uint64)
    counts = np.empty(rows * WORDS, dtype=np.uint8)
    for first in range(start, stop, _CHUNK_ROWS):
        # A scan of a million units takes a while: a cancelled plugin call stops between chunks.
        token.raise_if_cancelled()
        last = min(first + _CHUNK_ROWS, stop)
        size = (last - first) * WORDS
        np.bitwise_xor(flat[first * WORDS : last * WORDS], tiled[:size], out=xored[:size])
        np.bitwise_count(xored[:size], out=counts[:size])
        counts[:size].reshape(-1, WORDS).sum(axis=1, dtype=np.uint16, out=out[first:last])


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
