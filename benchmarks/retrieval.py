"""BM25 and HDC on the synthetic KB, with the BM25 peers of `benchmarks/bm25_peers.py` (bm25s' numpy
and numba backends, rank-bm25, PISA, tantivy; each skipped with a note when its package is absent)
over the same tokenized documents and queries.

Ops:
- `build`: index build. Ours includes the text pipeline, and the BM25 build starts with empty stem
  caches (as after KB load); the HDC build follows it, as in the app. The peers get pre-tokenized
  documents, so a `text-pipeline` row shows what tokenising those documents costs (warm caches).
- `bm25_top10`: one query at a time, top 10 (ours with the role boost of the `explain` act; the
  pruned path's kernel loaded first, as a running app has it). Ours and the peers the issue's
  ratios divide by (PISA, tantivy: `Peer.in_turns`) are timed in turns, blocks of 10 of the same
  queries each (`measure_in_turns`), so that each ratio compares the engines at the same moments:
  timed one after the other, each got another moment's machine speed, which moved ours against
  PISA by 60% between quiet runs (docs/benchmarks.md, h41bm7). Each row is still its engine's own
  time a query. The other peers are built and timed alone afterwards, one at a time.
- `hdc_scan`: the 4-field score of every unit (the compiled scan loaded first when numba is
  installed), plus a `bandwidth-floor` row: the time to read once, at the single-thread read
  bandwidth measured in the same run, the 512-byte vectors the scan reads: each unit's topic and
  each claim window (N + W rows). Role and acts are scored through a table of a few vectors, so
  they add no traffic (the floor counted 4 × N rows until 2026-11-26).
"""

from __future__ import annotations

from functools import partial

from benchmarks import bm25_peers, measure, measure_in_turns, repeats, row
from benchmarks.calibration import read_bandwidth
from benchmarks.synthetic import SyntheticKb
from core.infra.config import Bm25Config, HdcConfig
from core.retrieval.bm25 import prune_gate as bm25_prune_gate
from core.retrieval.bm25.index import Bm25Index
from core.retrieval.hdc import scan as hdc_scan
from core.retrieval.hdc.encoding import WORDS
from core.retrieval.hdc.index import HdcIndex
from core.text import tokenizer as text
from core.text.tokenizer import tokenize
from core.units import ACT_PREFERRED_ROLES, Act

OPS = ("build", "bm25_top10", "hdc_scan")
WARMUP = 10
ACT = Act.EXPLAIN
# rank-bm25 scores every document in Python per query (~0.1 s at 100k): a few queries suffice.
RANK_BM25_QUERIES = 20
HDC_QUERIES = 100
QUERIES = 200  # questions a size asks, after the warm-up
# numba's first compile of the pruned kernel on a fresh machine (later loads come from its cache).
LOAD_WAIT_S = 120


def run(sizes: list[int], *, ops: set[str], peers: bool) -> list[dict]:
    rows: list[dict] = []
    bandwidth = read_bandwidth() if "hdc_scan" in ops else 0.0
    for n in sizes:
        # A smoke run's figures mean nothing: enough questions for the warm-up and a timed few.
        kb = SyntheticKb(n, query_count=repeats(QUERIES, WARMUP + 2))
        bm25_rows, index = _bm25_build(kb, ops) if ops & {"build", "bm25_top10"} else ([], None)
        rows += bm25_rows
        rows += _hdc_rows(kb, ops, bandwidth) if ops & {"build", "hdc_scan"} else []
        if index is not None:
            rows += _top10_and_peer_rows(kb, ops, index, bm25_peers.available() if peers else [])
    return rows


def _bm25_build(kb: SyntheticKb, ops: set[str]) -> tuple[list[dict], Bm25Index]:
    """Our build's row (if asked for) and the index."""
    holder: list[Bm25Index] = []
    text.stem.cache_clear()
    text.normalise_word.cache_clear()  # a cold start is what KB load sees
    times, peak = measure([lambda: holder.append(Bm25Index.build(kb.units, Bm25Config()))])
    return ([row("mrptui-bm25", kb.n, "build", times, peak)] if "build" in ops else []), holder[0]


def _hdc_rows(kb: SyntheticKb, ops: set[str], bandwidth: float) -> list[dict]:
    units, holder, config = kb.units, [], HdcConfig()
    times, peak = measure([lambda: holder.append(HdcIndex.build(units, config))])
    rows = [row("mrptui-hdc", kb.n, "build", times, peak)] if "build" in ops else []
    if "hdc_scan" in ops:
        index = holder[0]
        # As for BM25: the compiled scan loads in the background on the first big scan, and a
        # long-running app has it after a few seconds (numpy's path where numba is absent).
        hdc_scan.wait_for_kernel(LOAD_WAIT_S)
        queries = [index.query(tokenize(q), ACT) for q in kb.queries[: WARMUP + HDC_QUERIES]]
        times, peak = measure([partial(index.scores, q) for q in queries], WARMUP)
        rows.append(row("mrptui", kb.n, "hdc_scan", times, peak))
        floor_ms = (len(index.topic) + len(index.claim)) * WORDS * 8 / bandwidth * 1000
        rows.append(row("bandwidth-floor", kb.n, "hdc_scan", [floor_ms], 0.0))
    return rows


def _top10_and_peer_rows(kb: SyntheticKb, ops: set[str], index: Bm25Index, peers: list[bm25_peers.Peer]) -> list[dict]:
    """The peers' build rows, then the top-10 rows: ours and the `in_turns` peers timed in turns,
    the other peers alone after them. Each peer's top-10 row says how many of our top 10 it also
    returns, averaged over the queries we return anything for."""
    documents: list[list[list[str]]] = []
    times, peak = measure([lambda: documents.append(bm25_peers.documents(kb.units))] if peers else [])
    rows = [row("text-pipeline", kb.n, "build", times, peak)] if peers and "build" in ops else []
    top10, k = "bm25_top10" in ops, min(10, kb.n)
    queries = [tokenize(q) for q in kb.queries]
    in_turns = [(peer, _peer_build(peer, documents[0], kb.n, ops, rows)) for peer in peers if peer.in_turns]
    ours: list[set[int]] = []
    if top10:
        engines = [("mrptui", _ours(index))] + [(peer.engine, search) for peer, search in in_turns]
        found: list[list] = [[] for _ in engines]
        calls = [
            [lambda q=q, s=search, f=into: f.append(s(q, k)) for q in queries[:WARMUP] + queries]
            for (_, search), into in zip(engines, found, strict=True)
        ]
        top = [
            row(e, kb.n, "bm25_top10", t, p)
            for (e, _), (t, p) in zip(engines, measure_in_turns(calls, WARMUP), strict=True)
        ]
        position = {unit.id: i for i, unit in enumerate(kb.units)}
        ours = [{position[unit_id] for unit_id, _ in hits} for hits in found[0][WARMUP:]]
        for result, hits in zip(top[1:], found[1:], strict=True):
            result["top10_overlap"] = _overlap(ours, hits[WARMUP:])
        rows += top
    for peer in peers:
        if not peer.in_turns:
            search = _peer_build(peer, documents[0], kb.n, ops, rows)
            rows += [_alone_top10_row(peer, search, kb.n, queries, ours)] if top10 else []
    return rows


def _ours(index: Bm25Index):
    """Our top 10 for a query, once the pruned path's kernel is loaded: it loads in the background
    on the first big query, and a long-running app has it after a few seconds, so the timed
    queries wait for it rather than mix the paths."""
    bm25_prune_gate.kernel_for(lambda: bm25_prune_gate.PRUNE_FROM)
    bm25_prune_gate.wait_until_loaded(LOAD_WAIT_S)
    preferred = ACT_PREFERRED_ROLES[ACT]
    return lambda query, k: index.top_k(query, preferred, k)


def _peer_build(peer: bm25_peers.Peer, documents: list[list[str]], n: int, ops: set[str], rows: list[dict]):
    """The peer's search; its build row goes into `rows` when asked for and its own."""
    searches: list = []
    times, peak = measure([lambda: searches.append(peer.build(documents))])
    rows += [row(peer.engine, n, "build", times, peak)] if "build" in ops and peer.report_build else []
    return searches[0]


def _alone_top10_row(peer: bm25_peers.Peer, search, n: int, queries: list[list[str]], ours: list[set[int]]) -> dict:
    """One query at a time (the warm-up queries also compile numba's kernels)."""
    k = min(10, n)
    slow = peer.slow and n >= 100_000
    asked, warmup = (queries[:RANK_BM25_QUERIES], 0) if slow else (queries, WARMUP)
    found: list = []
    calls = [lambda q=q: found.append(search(q, k)) for q in asked[:warmup] + asked]
    times, peak = measure(calls, warmup)
    result = row(peer.engine, n, "bm25_top10", times, peak)
    result["top10_overlap"] = _overlap(ours, found[warmup:])
    return result


def _overlap(ours: list[set[int]], found: list) -> float | None:
    theirs = [{int(i) for i in hits} for hits in found]
    shared = [len(mine & hits) / len(mine) for mine, hits in zip(ours, theirs, strict=False) if mine]
    return round(sum(shared) / len(shared), 3) if shared else None
