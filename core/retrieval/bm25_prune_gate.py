"""Whether a BM25 query takes the pruned path (`bm25_prune`), decided without importing numba.

Importing numba costs ~0.4 s and its first compile more (cached on disk after), so small KBs and
one-off CLI questions never pay it: only a query whose terms hold `PRUNE_FROM` postings or more
does, where the exhaustive path costs about a tenth of a millisecond and pruning wins.
"""

from __future__ import annotations

from functools import cache
from importlib.util import find_spec

PRUNE_FROM = 8192


@cache
def _available() -> bool:
    return find_spec("numba") is not None


def kernel_for(postings: int):
    """The compiled pruned search for a query over `postings` postings, or None: exhaustive."""
    if postings < PRUNE_FROM or not _available():
        return None
    from core.retrieval import bm25_prune

    return bm25_prune.search


def pruner(indptr, indices, data):
    from core.retrieval.bm25_prune import Pruner

    return Pruner(indptr, indices, data)
