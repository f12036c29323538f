"""Retrieval quality on a public BEIR collection: every mrptui lane and fusion method beside bm25s.

`python -m benchmarks.ir [--beir ../shared/ir/nfcorpus] [--json]`. The mrptui rows come from the
same code as `mrptui eval --beir`; bm25s (lucene method, k1 1.2, b 0.75, English stopwords,
PyStemmer's English stemmer, title + " " + text, top 1,000) runs on the same documents and queries
in the same process and is scored by the same ir-measures call. The collection is read in place:
it is never copied into the package or the tests.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from core.eval import beir as ireval
from core.infra.config import load_retrieval_config


def default_collection() -> Path:
    """`shared/ir/nfcorpus` beside the checkout or beside any folder above it (worktrees nest)."""
    root = Path(__file__).resolve().parents[1]
    candidates = [folder / "shared" / "ir" / "nfcorpus" for folder in root.parents]
    return next((c for c in candidates if c.is_dir()), candidates[0])


def bm25s_run(collection: ireval.IrCollection, depth: int = ireval.RUN_DEPTH) -> ireval.Run:
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    units = collection.kb.units
    corpus = [f"{u.topic} {u.body}" for u in units]
    retriever = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    retriever.index(bm25s.tokenize(corpus, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
    qids = sorted(collection.queries)
    tokens = bm25s.tokenize([collection.queries[q] for q in qids], stopwords="en", stemmer=stemmer, show_progress=False)
    docs, scores = retriever.retrieve(tokens, k=min(1000, len(units)), show_progress=False)
    return {
        qid: {units[int(d)].id: float(s) for d, s in list(zip(docs[i], scores[i], strict=True))[:depth] if s > 0}
        for i, qid in enumerate(qids)
    }


def table(directory: Path) -> dict[str, object]:
    collection = ireval.load_beir(directory)
    started = time.perf_counter()
    runs = ireval.run_systems(collection, load_retrieval_config())
    seconds = time.perf_counter() - started
    runs["bm25s"] = bm25s_run(collection)
    document = ireval.report(collection, ireval.measure(runs, collection.qrels))
    document["mrptui_seconds"] = round(seconds, 2)
    return document


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ir", description=__doc__.splitlines()[0])
    parser.add_argument("--beir", type=Path, default=None, help="a BEIR folder (default: nfcorpus)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    args.beir = args.beir or default_collection()
    if not args.beir.is_dir():
        sys.exit(f"no BEIR collection at {args.beir}")
    document = table(args.beir)
    print(json.dumps(document, indent=2) if args.json else ireval.markdown_table(document))


if __name__ == "__main__":
    main()
