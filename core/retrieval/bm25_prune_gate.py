"""Whether a BM25 query takes the pruned path (`bm25_prune`), decided without importing numba.

Importing numba and loading the compiled kernel from its disk cache take ~1–3 s (the first
compile on a machine ~20 s), more than thousands of exhaustive queries. So small KBs never pay
it: only a query whose terms hold `PRUNE_FROM` postings or more asks for the kernel, and the
first such query starts loading it in a background thread and is itself scored exhaustively, as
is every query until the kernel is ready; from then on the kernel serves every query. No query
waits for numba.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import cache
from importlib.util import find_spec

PRUNE_FROM = 8192

_ready: list[Callable] = []
_loading = threading.Lock()
_started: list[threading.Thread] = []


@cache
def _available() -> bool:
    return find_spec("numba") is not None


def kernel_for(postings: int) -> Callable | None:
    """The compiled pruned search for a query over `postings` postings, or None: exhaustive.
    Once loaded it serves every query: on a few postings it beats numpy's per-call overheads."""
    if _ready:
        return _ready[0]
    if postings < PRUNE_FROM or not _available():
        return None
    with _loading:
        if not _started:
            _started.append(threading.Thread(target=_load, name="bm25-prune-load", daemon=True))
            _started[0].start()
    return None


def wait_until_loaded(timeout: float) -> bool:
    """Whether the kernel is ready, waiting up to `timeout` s for a load in progress (benchmarks
    and tests, which time or check the pruned path itself)."""
    if _started:
        _started[0].join(timeout)
    return bool(_ready)


def _load() -> None:
    from core.retrieval import bm25_prune

    _ready.append(bm25_prune.search)


def pruner(indptr, indices, data):
    from core.retrieval.bm25_prune import Pruner

    return Pruner(indptr, indices, data)
