"""ThinkingDB closure latency on synthetic hub-heavy fact graphs (DESIGN §14: ≤ 5 ms median at 100k).

Facts use uses/provides/depends_on/relevant_for with Zipfian subjects and objects, so a few
entities are hubs. Two shapes:
  closure             subject hubs and object hubs are different entities (a KB where many things
                      use "Kafka" but Kafka itself states few facts);
  closure_shared_hubs the same entities are hubs on both sides, so a forward walk from almost any
                      seed reaches most of the KB; only maxNeighbourhoodFacts bounds it.
Queries name 1–3 entities drawn by degree (popular entities are asked about more often). The
index is built before timing; `closure_build` rows time `ThinkingDB.build` alone.

    python -m benchmarks.closure [SIZE ...]
"""

from __future__ import annotations

import statistics
import sys
import time
import tracemalloc
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from benchmarks import repeats
from benchmarks.synthetic import pseudo_words
from core.retrieval.rules import load_rules
from core.retrieval.thinkingdb import ThinkingDB
from core.units import KnowledgeUnit, Role

RELATIONS = ("uses", "provides", "depends_on", "relevant_for")
RELATION_SHARE = (0.3, 0.25, 0.25, 0.2)
FACTS_PER_ENTITY = 5
ZIPF_EXPONENT = 1.0
QUERIES = 300
WARMUP = 20
MEMORY_QUERIES = 30
_TEMPLATES = (
    "Why is {0} relevant?",
    "Explain why {0} is relevant for {1}.",
    "What does {0} depend on, and how does it relate to {1} and {2}?",
)


@dataclass
class FactGraph:
    n: int
    shared_hubs: bool = False
    seed: int = 11

    def rng(self, purpose: int) -> np.random.Generator:
        return np.random.default_rng([self.seed, purpose, int(self.shared_hubs)])

    @cached_property
    def entities(self) -> list[str]:
        count = max(self.n // FACTS_PER_ENTITY, 10)
        words = pseudo_words(max(64, int(2 * count**0.5)), self.rng(0))
        pairs = self.rng(1).permutation(len(words) ** 2)[:count]
        return [f"{words[p // len(words)].title()} {words[p % len(words)].title()}" for p in pairs]

    @cached_property
    def triples(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        rng, count = self.rng(2), len(self.entities)
        weights = 1.0 / np.arange(1, count + 1) ** ZIPF_EXPONENT
        weights /= weights.sum()
        subjects = rng.choice(count, size=self.n, p=weights)
        object_ranks = rng.choice(count, size=self.n, p=weights)
        objects = object_ranks if self.shared_hubs else rng.permutation(count)[object_ranks]
        relations = rng.choice(len(RELATIONS), size=self.n, p=RELATION_SHARE)
        return subjects, relations, objects, rng.uniform(0.5, 1.0, size=self.n)

    @cached_property
    def units(self) -> list[KnowledgeUnit]:
        # Trusted generated data: skip validation so building 1M units takes seconds, not minutes.
        subjects, relations, objects, confidences = self.triples
        return [
            KnowledgeUnit.model_construct(
                id=f"fg::chunk-{i // 1000:04d}::unit-{i % 1000:03d}",
                source_id="fg",
                chunk_id=f"fg::chunk-{i // 1000:04d}",
                role=Role.EXPLANATION,
                topic=self.entities[s],
                claim=f"{self.entities[s]} {RELATIONS[r]} {self.entities[o]}.",
                subject=self.entities[s],
                relation=RELATIONS[r],
                object=self.entities[o],
                confidence=float(c),
            )
            for i, (s, r, o, c) in enumerate(zip(subjects, relations, objects, confidences, strict=True))
        ]

    @cached_property
    def queries(self) -> list[str]:
        subjects, _, objects, _ = self.triples
        degree = np.bincount(np.r_[subjects, objects], minlength=len(self.entities)).astype(float)
        rng = self.rng(3)
        picks = rng.choice(len(self.entities), size=(QUERIES + WARMUP, 3), p=degree / degree.sum())
        shapes = rng.integers(0, len(_TEMPLATES), size=QUERIES + WARMUP)
        return [_TEMPLATES[k].format(*(self.entities[e] for e in row)) for k, row in zip(shapes, picks, strict=True)]


def _row(n: int, op: str, times_ms: list[float], peak_bytes: int) -> dict:
    return {
        "engine": "mrptui",
        "n": n,
        "op": op,
        "median_ms": round(statistics.median(times_ms), 3),
        "p95_ms": round(float(np.percentile(times_ms, 95)), 3),
        "peak_mb": round(peak_bytes / 2**20, 1),
    }


def _measure(graph: FactGraph, op: str) -> list[dict]:
    ruleset = load_rules()
    units = graph.units
    started = time.perf_counter()
    db = ThinkingDB.build(units, ruleset)
    build_ms = (time.perf_counter() - started) * 1000
    times = []
    warmup, count = repeats(WARMUP), repeats(QUERIES, 3)  # a smoke run proves the op runs
    for index, query in enumerate(graph.queries[: warmup + count]):
        started = time.perf_counter()
        db.query(query)
        if index >= warmup:
            times.append((time.perf_counter() - started) * 1000)
    # tracemalloc slows Python down, so memory is measured in a separate, shorter pass.
    tracemalloc.start()
    for query in graph.queries[: repeats(MEMORY_QUERIES, 3)]:
        db.query(query)
    query_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    rows = [_row(graph.n, op, times, query_peak)]
    if not graph.shared_hubs:
        tracemalloc.start()
        ThinkingDB.build(units, ruleset)
        build_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        rows.insert(0, _row(graph.n, "closure_build", [build_ms], build_peak))
    return rows


def run(sizes: list[int]) -> list[dict]:
    """Rows for `benchmarks.__main__`: build time, closure latency, and the shared-hub worst case."""
    rows: list[dict] = []
    for n in sizes:
        rows += _measure(FactGraph(n), "closure")
        rows += _measure(FactGraph(n, shared_hubs=True), "closure_shared_hubs")
    return rows


def markdown(rows: list[dict]) -> str:
    lines = ["| engine | n | op | median ms | p95 ms | peak MB |", "|---|---:|---|---:|---:|---:|"]
    lines += [
        f"| {r['engine']} | {r['n']:,} | {r['op']} | {r['median_ms']} | {r['p95_ms']} | {r['peak_mb']} |" for r in rows
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown(run([int(a) for a in sys.argv[1:]] or [10_000, 100_000])))
