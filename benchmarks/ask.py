"""End-to-end `ask` latency: the whole engine (plan, sd, kb, gs, val) on the sample KB and on
synthetic KBs. Indexes are built by a first, untimed question, as a running app would have them."""

from __future__ import annotations

import json

from benchmarks import measure, repeats, row
from benchmarks.synthetic import SyntheticKb
from core.infra.resources import sample_kb_dir
from core.kb.knowledge_base import KnowledgeBase
from core.kernel.contract import Request
from core.kernel.session import Session
from core.retrieval.bm25 import prune_gate as bm25_prune_gate
from core.units import Caller

OPS = ("ask",)
QUESTIONS_PER_SIZE = 50
KERNEL_WAIT_S = 120


def _caller(spec: dict | None) -> Caller:
    if not spec:
        return Caller()
    dated = {"as_of": spec["as_of"]} if spec.get("as_of") else {}
    return Caller(tags=frozenset(spec.get("tags", ())), region=spec.get("region"), **dated)


def _timed(session: Session, requests: list[Request]) -> tuple[list[float], float]:
    for request in {r.caller: r for r in requests}.values():
        list(session.run(request))
    # Below 1M units a question's BM25 pool (1,000 units) is scored without the pruned-search
    # kernel (bm25/prune_gate.py), but a big query for a few units (the why-not panel's) or a
    # bigger KB's pool starts loading it in the background (1-3 s, ~1 s of CPU): if one did,
    # wait, as bm25_top10 does, rather than time questions beside the load.
    bm25_prune_gate.wait_until_loaded(KERNEL_WAIT_S)
    return measure([lambda r=r: list(session.run(r)) for r in requests])


def sample_kb_row() -> dict:
    session = Session.open()
    queries = json.loads((sample_kb_dir() / "queries.json").read_text(encoding="utf-8"))
    requests = [
        Request(question=q["question"], caller=_caller(q.get("caller"))) for q in queries[: repeats(len(queries), 3)]
    ]
    times, peak = _timed(session, requests)
    return row("mrptui-sample-kb", len(session.kb.units), "ask", times, peak)


def synthetic_row(n: int) -> dict:
    synthetic = SyntheticKb(n, query_count=repeats(QUESTIONS_PER_SIZE, 3))
    session = Session.from_kb(KnowledgeBase.from_units(synthetic.units))
    requests = [Request(question=f"what is {q}?") for q in synthetic.queries]
    times, peak = _timed(session, requests)
    return row("mrptui", n, "ask", times, peak)


def run(sizes: list[int]) -> list[dict]:
    return [sample_kb_row(), *(synthetic_row(n) for n in sizes)]


if __name__ == "__main__":
    import sys

    from benchmarks.__main__ import markdown

    print(markdown(run([int(s) for s in (sys.argv[1:] or ["1000", "10000"])])))
