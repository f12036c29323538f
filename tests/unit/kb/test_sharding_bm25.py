"""Two-phase BM25F without a cluster: statistics summed over parts, each part scored under them,
the top k merged, equal to one index over every unit (the arithmetic the shards run)."""

from __future__ import annotations

import math

import numpy as np

from core.infra.config import load_retrieval_config
from core.kb.sharding.global_bm25 import Bm25Stats, GlobalBm25, local_stats
from core.kb.sharding.sharded import merge_top
from core.kb.sharding.shards import partition
from core.retrieval.bm25.formula import idf
from core.retrieval.bm25.index import Bm25Index
from core.text.tokenizer import tokenize
from core.units import KnowledgeUnit, Role

OTHER_ROLES = [role for role in Role if role is not Role.PROCEDURE]
WORDS = "kiln glaze copper firing shelf clay stoneware reduction cone ash red vent".split()


def units(count: int) -> list[KnowledgeUnit]:
    out = []
    for n in range(count):
        words = [WORDS[(n * 7 + i * 3) % len(WORDS)] for i in range(2 + n % 9)]
        procedure = n % 4 == 0
        out.append(
            KnowledgeUnit(
                id=f"pots::chunk-{n:03d}::unit-000",
                source_id="pots",
                chunk_id=f"chunk-{n:03d}",
                role=Role.PROCEDURE if procedure else OTHER_ROLES[n % len(OTHER_ROLES)],
                topic=" ".join(words[:2]).capitalize(),
                **{"procedure" if procedure else "claim": " ".join(words).capitalize() + "."},
                **({"condition": "When the kiln is hot."} if n % 5 == 0 else {}),
            )
        )
    return out


def test_parts_scored_under_summed_statistics_rank_as_one_index() -> None:
    config = load_retrieval_config().bm25
    everything = units(60)
    whole = Bm25Index.build(everything, config)
    roles = (Role.PROCEDURE, Role.CONSTRAINT)
    for shards in (1, 2, 3, 5):
        parts = [Bm25Index.build(part, config) for part in partition(everything, shards) if part]
        for question in ("kiln firing cone", "copper red red glaze", "hot kiln shelf vent", "unknown words"):
            terms = tokenize(question)
            stats = Bm25Stats.empty()
            for part in parts:
                stats = stats.plus(local_stats(part, terms))
            assert stats.units == len(everything)
            assert stats.df == {t: whole.doc_freq(t) for t in dict.fromkeys(terms)}
            merged = merge_top((GlobalBm25([part], config, stats).top_k(terms, roles, 10) for part in parts), 10)
            expected = whole.top_k(terms, roles, 10)
            assert [uid for uid, _ in merged] == [uid for uid, _ in expected]
            assert all(abs(a - b) <= 1e-9 for (_, a), (_, b) in zip(merged, expected, strict=True))
            for uid, score in merged[:3]:  # the coordinator's explanation of a candidate
                one = GlobalBm25([Bm25Index.build([u for u in everything if u.id == uid], config)], config, stats)
                explained, single = one.explain(terms, uid, roles), whole.explain(terms, uid, roles)
                assert abs(explained.raw - score) <= 1e-9
                pairs = zip(explained.contributions, single.contributions, strict=True)
                for a, b in pairs:
                    assert (a.term, a.field, a.tf, a.df, a.dl) == (b.term, b.field, b.tf, b.df, b.dl)
                    assert abs(a.contribution - b.contribution) <= 1e-9 and abs(a.avgdl - b.avgdl) <= 1e-9


def test_an_idf_is_the_same_float_from_an_array_of_dfs_and_from_one_df() -> None:
    """An index computes its vocabulary's idf as an array, a shard's coordinator one term's as
    a scalar: numpy's array log takes a SIMD path on AVX-512 CPUs that can differ in the last
    bit, which made a sharded score differ from one process's on such a machine. Here the dfs
    a 1M-unit view can have, every one against its scalar."""
    units_count = 1_000_000
    dfs = np.unique(np.geomspace(1, units_count, 5_000).astype(np.int64))
    from_array = idf(units_count, dfs)
    assert from_array.dtype == np.float64
    assert from_array.tolist() == [idf(units_count, int(d)) for d in dfs.tolist()]
    assert [idf(units_count, int(d)) for d in dfs[:3].tolist()] == [
        math.log((units_count - d + 0.5) / (d + 0.5) + 1) for d in dfs[:3].tolist()
    ]
