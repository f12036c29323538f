"""BM25 and HDC on the synthetic KB, with bm25s (numpy and, when numba is installed, numba backends)
and rank-bm25 over the same tokenized documents.

Ops:
- `build`: index build. Ours includes the text pipeline, and the BM25 build starts with empty stem
  caches (as after KB load); the HDC build follows it, as in the app. The peers get pre-tokenized
  documents, so a `text-pipeline` row shows what tokenising those documents costs (warm caches).
- `bm25_top10`: one query at a time, top 10 (ours with the role boost of the `explain` act).
- `hdc_scan`: the 4-field score of every unit, plus a `bandwidth-floor` row: the time to read
  N × 4 × 512 bytes once at the single-thread read bandwidth measured in the same run.
"""

from __future__ import annotations

import sys
import time
from functools import partial
from itertools import chain

import numpy as np

from benchmarks import measure, row, smoke
from benchmarks.synthetic import SyntheticKb
from core import text
from core.config import Bm25Config, HdcConfig
from core.retrieval.bm25 import Bm25Index, field_tokens
from core.retrieval.hdc import WORDS
from core.retrieval.hdc_index import HdcIndex
from core.text import tokenize
from core.units import ACT_PREFERRED_ROLES, Act

OPS = ("build", "bm25_top10", "hdc_scan")
WARMUP = 10
ACT = Act.EXPLAIN
# rank-bm25 scores every document in Python per query (~0.1 s at 100k): a few queries suffice.
RANK_BM25_QUERIES = 20
HDC_QUERIES = 100
_BANDWIDTH_BYTES = 256 * 2**20


def run(sizes: list[int], *, ops: set[str], peers: bool) -> list[dict]:
    rows: list[dict] = []
    bandwidth = read_bandwidth() if "hdc_scan" in ops else 0.0
    for n in sizes:
        kb = SyntheticKb(n)
        rows += _bm25_rows(kb, ops) if ops & {"build", "bm25_top10"} else []
        rows += _hdc_rows(kb, ops, bandwidth) if ops & {"build", "hdc_scan"} else []
        rows += _peer_rows(kb, ops) if peers and ops & {"build", "bm25_top10"} else []
    return rows


def _bm25_rows(kb: SyntheticKb, ops: set[str]) -> list[dict]:
    units, holder = kb.units, []
    text.stem.cache_clear()
    text.normalise_word.cache_clear()  # a cold start is what KB load sees
    times, peak = measure([lambda: holder.append(Bm25Index.build(units, Bm25Config()))])
    rows = [row("mrptui-bm25", kb.n, "build", times, peak)] if "build" in ops else []
    if "bm25_top10" in ops:
        index, preferred = holder[0], ACT_PREFERRED_ROLES[ACT]
        queries = [tokenize(q) for q in kb.queries]
        times, peak = measure([partial(index.top_k, q, preferred, 10) for q in queries[:WARMUP] + queries], WARMUP)
        rows.append(row("mrptui", kb.n, "bm25_top10", times, peak))
    return rows


def _hdc_rows(kb: SyntheticKb, ops: set[str], bandwidth: float) -> list[dict]:
    units, holder, config = kb.units, [], HdcConfig()
    times, peak = measure([lambda: holder.append(HdcIndex.build(units, config))])
    rows = [row("mrptui-hdc", kb.n, "build", times, peak)] if "build" in ops else []
    if "hdc_scan" in ops:
        index = holder[0]
        queries = [index.query(tokenize(q), ACT) for q in kb.queries[: WARMUP + HDC_QUERIES]]
        times, peak = measure([partial(index.scores, q) for q in queries], WARMUP)
        rows.append(row("mrptui", kb.n, "hdc_scan", times, peak))
        floor_ms = kb.n * 4 * WORDS * 8 / bandwidth * 1000
        rows.append(row("bandwidth-floor", kb.n, "hdc_scan", [floor_ms], 0.0))
    return rows


def _peer_rows(kb: SyntheticKb, ops: set[str]) -> list[dict]:
    try:
        import bm25s
        import rank_bm25
    except ImportError as exc:
        print(f"peers skipped: {exc}", file=sys.stderr)
        return []
    tokenized: list[list[list[str]]] = []
    times, peak = measure([lambda: tokenized.append([list(chain.from_iterable(field_tokens(u))) for u in kb.units])])
    rows = [row("text-pipeline", kb.n, "build", times, peak)] if "build" in ops else []
    documents = tokenized[0]
    queries = [tokenize(q) for q in kb.queries]
    bm25s_index = bm25s.BM25(k1=1.2, b=0.75, backend="numpy")
    build_bm25s = [lambda: bm25s_index.index(documents, show_progress=False)]
    rank_holder: list = []
    build_rank = [lambda: rank_holder.append(rank_bm25.BM25Okapi(documents, k1=1.2, b=0.75))]
    for engine, calls in (("bm25s", build_bm25s), ("rank-bm25", build_rank)):
        times, peak = measure(calls)
        rows += [row(engine, kb.n, "build", times, peak)] if "build" in ops else []
    if "bm25_top10" in ops:
        k = min(10, kb.n)
        rows.append(_bm25s_top10_row("bm25s-numpy", bm25s_index, kb.n, queries, k))
        numba_index = _bm25s_numba_index(documents)
        if numba_index is not None:
            rows.append(_bm25s_top10_row("bm25s-numba", numba_index, kb.n, queries, k))
        count = RANK_BM25_QUERIES if kb.n >= 100_000 else len(queries)
        calls = [partial(_rank_bm25_top, rank_holder[0], q, k) for q in queries[:count]]
        times, peak = measure(calls)
        rows.append(row("rank-bm25", kb.n, "bm25_top10", times, peak))
    return rows


def _bm25s_numba_index(documents: list[list[str]]):
    """bm25s with its numba backend (same index, compiled scoring), or None without numba."""
    import bm25s

    if smoke():
        print("bm25s numba backend skipped in a smoke run: compiling it takes ~6 s of CPU", file=sys.stderr)
        return None
    try:
        import numba  # noqa: F401
    except ImportError:
        print("bm25s numba backend skipped: numba is not installed (pip install '.[bench]')", file=sys.stderr)
        return None
    index = bm25s.BM25(k1=1.2, b=0.75, backend="numba")
    index.index(documents, show_progress=False)
    return index


def _bm25s_top10_row(engine: str, index, n: int, queries: list[list[str]], k: int) -> dict:
    """One query at a time; the warm-up queries also compile numba's kernels."""
    calls = [partial(index.retrieve, [q], k=k, show_progress=False) for q in queries[:WARMUP] + queries]
    times, peak = measure(calls, WARMUP)
    return row(engine, n, "bm25_top10", times, peak)


def _rank_bm25_top(index, query: list[str], k: int) -> np.ndarray:
    scores = index.get_scores(query)
    return np.argpartition(scores, len(scores) - k)[len(scores) - k :]


def read_bandwidth() -> float:
    """Single-thread memory read bandwidth in bytes/s: the best of five sums over a 256 MB array."""
    data = np.ones(_BANDWIDTH_BYTES // 8, dtype=np.uint64)
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        data.sum()
        best = min(best, time.perf_counter() - started)
    return _BANDWIDTH_BYTES / best
