"""Whether a BM25 query takes the pruned path (`bm25_prune`), decided without importing numba.

Only a query whose terms hold `PRUNE_FROM` postings or more, for few units against the index's
size (`prunes`), asks for the kernel; the first such query starts loading it in a background
thread and is itself scored exhaustively, as is every query until the kernel is ready; from then
on the kernel serves every query `prunes` allows. No query waits for numba
(core/retrieval/kernel_gate.py).
"""

from __future__ import annotations

from collections.abc import Callable

from core.retrieval.kernel_gate import KernelGate

PRUNE_FROM = 8192
# The pruned search skips what cannot reach the k-th score: the larger k, the lower that score and
# the less it skips, while each unit it scores costs more than in the exhaustive path's array
# steps, whose cost grows with the index. CPU a query for 50 synthetic questions, pruned against
# exhaustive: 100k units, k=10 0.33 / 0.68 ms, k=100 1.04 / 0.91, k=1000 (a lane's pool) 2.49 /
# 1.62; 300k, k=100 2.78 / 2.60, k=300 4.05 / 4.19, k=1000 5.32 / 5.24; 1M, k=1000 10.0 / 17.5.
UNITS_PER_PRUNED_K = 1000

_GATE = KernelGate("core.retrieval.bm25.prune", "search", PRUNE_FROM, name="bm25-prune-load")


def kernel_for(postings: Callable[[], int]) -> Callable | None:
    """The compiled pruned search for a query over `postings()` postings, or None: exhaustive.
    Once loaded it serves every query `prunes` allows: on a few postings it beats numpy's per-call
    overheads. So the postings are counted only until then: right after a query's sweep at 1M
    units, that sum's numpy calls cost ~10 µs of cache misses."""
    kernel = _GATE.ready
    return kernel if kernel is not None else _GATE.kernel_for(postings())


def prunes(k: int, units: int) -> bool:
    """Whether a query for the best `k` of `units` units may take the pruned path."""
    return k * UNITS_PER_PRUNED_K <= units


def wait_until_loaded(timeout: float) -> bool:
    """Whether the kernel is ready, waiting up to `timeout` s for a load in progress (benchmarks
    and tests, which time or check the pruned path itself)."""
    return _GATE.wait_until_loaded(timeout)


def pruner(indptr, indices, data, roles, id_rank):
    from core.retrieval.bm25.prune import Pruner

    return Pruner(indptr, indices, data, roles, id_rank)
