"""Whether a BM25 query takes the pruned path (`bm25_prune`), decided without importing numba.

Only a query for at most `PRUNE_UP_TO_K` units whose terms hold `PRUNE_FROM` postings or more
asks for the kernel; the first such query starts loading it in a background thread and is itself
scored exhaustively, as is every query until the kernel is ready; from then on the kernel serves
every query for at most `PRUNE_UP_TO_K` units. No query waits for numba
(core/retrieval/kernel_gate.py).
"""

from __future__ import annotations

from collections.abc import Callable

from core.retrieval.kernel_gate import KernelGate

PRUNE_FROM = 8192
# The pruned search skips what cannot reach the k-th score; the larger k, the lower that score
# and the less it skips, while each unit it does score costs more than in the exhaustive path's
# array steps. At 100k synthetic units (50 questions, CPU a query): k=10 0.33 ms pruned against
# 0.68 exhaustive, k=50 0.63 / 0.77, k=100 1.04 / 0.91, k=1000 (a lane's pool) 2.49 / 1.62.
PRUNE_UP_TO_K = 64

_GATE = KernelGate("core.retrieval.bm25.prune", "search", PRUNE_FROM, name="bm25-prune-load")


def kernel_for(postings: int) -> Callable | None:
    """The compiled pruned search for a query over `postings` postings, or None: exhaustive.
    Once loaded it serves every query: on a few postings it beats numpy's per-call overheads."""
    return _GATE.kernel_for(postings)


def wait_until_loaded(timeout: float) -> bool:
    """Whether the kernel is ready, waiting up to `timeout` s for a load in progress (benchmarks
    and tests, which time or check the pruned path itself)."""
    return _GATE.wait_until_loaded(timeout)


def pruner(indptr, indices, data, roles, id_rank):
    from core.retrieval.bm25.prune import Pruner

    return Pruner(indptr, indices, data, roles, id_rank)
