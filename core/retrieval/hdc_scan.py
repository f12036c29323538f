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
"""

from __future__ import annotations

import os
from threading import Lock
from typing import TYPE_CHECKING

import numpy as np

from core import cancel
from core.retrieval.hdc_vectors import WORDS
from core.retrieval.row_blocks import RowBlocks

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

_CHUNK_ROWS = 1024
# Below this many rows per thread, handing work to another thread costs more than it saves.
_ROWS_PER_THREAD = 16384
_MAX_THREADS = 4

_pool: ThreadPoolExecutor | None = None
_pool_lock = Lock()


def hamming(matrix: np.ndarray | RowBlocks, vector: np.ndarray) -> np.ndarray:
    """Hamming distance of each row of `matrix` (N × WORDS uint64, or blocks of such rows) to
    `vector`, as uint16."""
    blocks = matrix.blocks if isinstance(matrix, RowBlocks) else (matrix,)
    # (rows flattened, where its first row's distance goes, its row count), in row order.
    pieces, at = [], 0
    for block in blocks:
        pieces.append((np.ascontiguousarray(block).reshape(-1), at, len(block)))
        at += len(block)
    out = np.empty(at, dtype=np.uint16)
    if at == 0:
        return out
    token = cancel.current()
    threads = min(_threads(), at // _ROWS_PER_THREAD)
    if threads < 2:
        _scan(pieces, vector, out, 0, at, token)
        return out
    bounds = np.linspace(0, at, threads + 1).astype(int)
    pool = _executor()
    futures = [pool.submit(_scan, pieces, vector, out, int(a), int(b), token) for a, b in zip(bounds, bounds[1:])]
    for future in futures:
        # A cancelled scan raises in its thread; result() re-raises it here, after every thread stopped.
        future.exception()
    for future in futures:
        future.result()
    return out


def _scan(
    pieces: list[tuple[np.ndarray, int, int]], vector: np.ndarray, out: np.ndarray, start: int, stop: int,
    token: cancel.CancelToken,
) -> None:
    """Distances of rows [start, stop) of the pieces laid end to end, into `out`."""
    rows = min(stop - start, _CHUNK_ROWS)
    tiled = np.tile(vector, rows)
    xored = np.empty(rows * WORDS, dtype=np.uint64)
    counts = np.empty(rows * WORDS, dtype=np.uint8)
    for flat, at, size in pieces:
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
