"""BM25 peers for `benchmarks/retrieval.py`: other engines over the same tokenised documents and
queries (k1 1.2, b 0.75, one thread), each built once and asked one query at a time.

- `bm25s-numpy`, `bm25s-numba`: bm25s' two backends (numba compiles its scoring on the first queries);
- `rank-bm25`: pure Python and numpy, every document scored per query;
- `pisa`: PISA through pyterrier-pisa (block-max WAND over a compressed index, built on disk). A query
  goes to the same native call (`_pisathon.retrieve`) that its PyTerrier transformer makes, without
  the pandas frame around it, so the time is PISA's and not the frame's. No stemming, no stopwords:
  the documents are already our tokens, joined by spaces;
- `tantivy`: tantivy's Python binding, an in-memory index, whitespace tokeniser, one OR query of
  term queries; the hits' document numbers come from a fast field.

Each optional package that is missing is skipped with a note on stderr (`pip install '.[bench]'`
installs them all). A search returns document positions, best first, so `retrieval.py` can report
how many of our top 10 each peer also returns (ours is BM25F with a role boost, theirs plain BM25).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

from benchmarks import smoke

K1, B = 1.2, 0.75
Search = Callable[[list[str], int], Sequence[int]]


@dataclass(frozen=True)
class Peer:
    engine: str
    build: Callable[[list[list[str]]], Search]
    report_build: bool = True  # False: the same index code as a peer already reported
    slow: bool = False  # scores every document in Python: a few queries, no warm-up, at 100k and up
    in_turns: bool = False  # an issue's ratio divides by it: timed in turns with ours (retrieval.py)


def available() -> list[Peer]:
    """Every peer whose package imports here; a note on stderr for each one that does not."""
    peers = []
    for peer, modules in _CANDIDATES:
        reason = _missing(peer.engine, modules)
        if reason:
            print(f"{peer.engine} skipped: {reason}", file=sys.stderr)
        else:
            peers.append(peer)
    return peers


def named(engine: str) -> Peer | None:
    """The peer of that engine if its package imports here (else None, with a note on stderr)."""
    for peer, modules in _CANDIDATES:
        if peer.engine == engine:
            reason = _missing(engine, modules)
            if reason:
                print(f"{engine} skipped: {reason}", file=sys.stderr)
            return None if reason else peer
    return None


def documents(units) -> list[list[str]]:
    """What each peer indexes of a unit: its field tokens (ours), joined field after field."""
    from core.retrieval.bm25.fields import field_tokens

    return [list(chain.from_iterable(field_tokens(unit))) for unit in units]


def _missing(engine: str, modules: tuple[str, ...]) -> str:
    if engine == "bm25s-numba" and smoke():
        return "compiling numba takes ~6 s of CPU, more than a smoke run's whole op"
    try:
        for module in modules:
            __import__(module)
    except ImportError as exc:
        return f"{exc} (pip install '.[bench]')"
    return ""


def _bm25s(backend: str) -> Callable[[list[list[str]]], Search]:
    def build(documents: list[list[str]]) -> Search:
        import bm25s

        index = bm25s.BM25(k1=K1, b=B, backend=backend)
        index.index(documents, show_progress=False)
        return lambda query, k: index.retrieve([query], k=k, show_progress=False).documents[0]

    return build


def _rank_bm25(documents: list[list[str]]) -> Search:
    import rank_bm25

    index = rank_bm25.BM25Okapi(documents, k1=K1, b=B)

    def search(query: list[str], k: int) -> Sequence[int]:
        scores = index.get_scores(query)
        top = np.argpartition(scores, len(scores) - k)[len(scores) - k :]
        return top[np.argsort(-scores[top], kind="stable")]

    return search


def _pisa(documents: list[list[str]]) -> Search:
    from pyterrier_pisa import PisaIndex, _pisathon

    folder = tempfile.mkdtemp(prefix="mrptui-bench-pisa-")
    atexit.register(shutil.rmtree, folder, True)
    with _stdout_to_stderr():  # PISA's native code prints progress on stdout, where --json rows go
        index = PisaIndex(folder, text_field="text", stemmer="none", stops="none", threads=1)
        index.index({"docno": str(i), "text": " ".join(doc)} for i, doc in enumerate(documents))
        retriever = index.bm25(k1=K1, b=B, num_results=10, threads=1)
        retriever.reset_retrieval_context()  # opens the index, as the transformer's first call would
    buffers: dict[int, tuple[np.ndarray, ...]] = {}

    def search(query: list[str], k: int) -> Sequence[int]:
        qidxs, docnos, ranks, scores = buffers.setdefault(k, _pisa_buffers(k))
        size = _pisathon.retrieve(
            retriever._ctxt,
            retriever.query_algorithm.value,
            [(0, " ".join(query))],
            k=k,
            threads=1,
            query_weighted=1 if retriever.query_weighted else 0,
            pretokenised=False,
            result_qidxs=qidxs,
            result_docnos=docnos,
            result_ranks=ranks,
            result_scores=scores,
        )
        return [int(docno) for docno in docnos[:size]]

    return search


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """File descriptor 1 points at stderr meanwhile: native code writes there without Python."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _pisa_buffers(k: int) -> tuple[np.ndarray, ...]:
    return (
        np.empty(k, dtype=np.int32),
        np.empty(k, dtype=object),
        np.empty(k, dtype=np.int32),
        np.empty(k, dtype=np.float32),
    )


def _tantivy(documents: list[list[str]]) -> Search:
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("body", stored=False, tokenizer_name="whitespace", index_option="freq")
    builder.add_integer_field("position", fast=True)
    schema = builder.build()
    index = tantivy.Index(schema)
    writer = index.writer(heap_size=256 * 2**20, num_threads=1)
    for position, doc in enumerate(documents):
        writer.add_document(tantivy.Document(body=" ".join(doc), position=position))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    searcher = index.searcher()
    term, should = tantivy.Query.term_query, tantivy.Occur.Should

    def search(query: list[str], k: int) -> Sequence[int]:
        question = tantivy.Query.boolean_query([(should, term(schema, "body", token)) for token in query])
        return searcher.fast_field_values("position", [address for _, address in searcher.search(question, k).hits])

    return search


_CANDIDATES = (
    (Peer("bm25s-numpy", _bm25s("numpy")), ("bm25s",)),
    (Peer("bm25s-numba", _bm25s("numba"), report_build=False), ("bm25s", "numba")),
    (Peer("rank-bm25", _rank_bm25, slow=True), ("rank_bm25",)),
    (Peer("pisa", _pisa, in_turns=True), ("pyterrier_pisa",)),
    (Peer("tantivy", _tantivy, in_turns=True), ("tantivy",)),
)
