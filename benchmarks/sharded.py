"""The same questions on one process and on a local Dask cluster of 2 workers (issue 40): BM25
top-10 (`sharded_bm25`: two round trips a question, statistics then top-k) and `ask` end to end
(`sharded_ask`). Each sharded answer is checked against the one-process answer; a difference
fails the op. The shards are cut and opened before timing, as a running cluster would have them."""

from __future__ import annotations

import tempfile
from pathlib import Path

from benchmarks import BenchmarkFailed, measure, repeats, row
from benchmarks.synthetic import SyntheticKb
from core.kb.knowledge_base import KnowledgeBase
from core.kb.sharding.cluster import Cluster
from core.kb.sharding.config import ClusterConfig
from core.kernel.contract import Request
from core.kernel.session import Session
from core.kernel.shard_session import shard_session
from core.kernel.summary import summarise
from core.text.tokenizer import tokenize
from core.units import ACT_PREFERRED_ROLES, Act, Caller

OPS = ("sharded_bm25", "sharded_ask")
WORKERS = 2
QUESTIONS = 30


def run(sizes: list[int], *, ops: set[str]) -> list[dict]:
    rows: list[dict] = []
    # Shard timeouts far above any question's time: a benchmark measures, it does not fail fast.
    with Cluster(f"local:{WORKERS}", ClusterConfig(shard_timeout_ms=120_000)) as cluster:
        for n in sizes:
            synthetic = SyntheticKb(n, query_count=repeats(QUESTIONS, 2))
            kb = KnowledgeBase.from_units(synthetic.units)
            single, spread = Session.from_kb(kb), Session.from_kb(kb)
            with tempfile.TemporaryDirectory(prefix="mrptui-bench-shards-") as root:
                shard_session(spread, cluster, Path(root), WORKERS)
                if "sharded_bm25" in ops:
                    rows += _bm25_rows(single, spread, synthetic.queries, n)
                if "sharded_ask" in ops:
                    rows += _ask_rows(single, spread, synthetic.queries, n)
    return rows


def _bm25_rows(single: Session, spread: Session, queries: list[str], n: int) -> list[dict]:
    roles = ACT_PREFERRED_ROLES[Act.DEFINE]
    rows, answers = [], []
    for engine, session in (("mrptui", single), (f"mrptui-{WORKERS}-workers", spread)):
        index = session.indexes.for_view(session.view(Caller())).bm25
        terms = [tokenize(q) for q in queries]
        index.top_k(terms[0], roles, 10)  # builds (or opens) the index before timing
        found: list[list[str]] = []
        times, peak = measure([lambda t=t: found.append([u for u, _ in index.top_k(t, roles, 10)]) for t in terms])
        answers.append(found)
        rows.append(row(engine, n, "sharded_bm25", times, peak))
    if answers[0] != answers[1]:
        raise BenchmarkFailed("sharded_bm25", "the shards' top 10 differs from one process's", rows)
    return rows


def _ask_rows(single: Session, spread: Session, queries: list[str], n: int) -> list[dict]:
    requests = [Request(question=f"what is {q}?") for q in queries]
    rows, answers = [], []
    for engine, session in (("mrptui", single), (f"mrptui-{WORKERS}-workers", spread)):
        list(session.run(requests[0]))
        found: list[tuple] = []
        times, peak = measure([lambda r=r: found.append(_answer(session, r)) for r in requests])
        answers.append(found)
        rows.append(row(engine, n, "sharded_ask", times, peak))
    if answers[0] != answers[1]:
        raise BenchmarkFailed("sharded_ask", "an answer on the shards differs from one process's", rows)
    return rows


def _answer(session: Session, request: Request) -> tuple:
    summary = summarise(list(session.run(request)))
    return summary["answer"], summary["status"], [(e["id"], round(e["score"], 9)) for e in summary["evidence"]]
