"""The feedback and fusion variants docs/evaluation.md records, re-measured on a BEIR collection.

`python -m benchmarks.ir_variants [--beir ../shared/ir/nfcorpus]` prints nDCG@10 / Recall@100 for
each HDC feedback variant (rows) under each fusion variant (columns): the shipped weighted sum and
RRF, the weighted sum without the agreement bonus, HDC divided by its per-query top, and CombSUM
over z-scores or min-max scaled pools. Feedback "by score" bundles each unit with weight
raw(uᵢ) / raw(u₁) in a weighted majority; "q=Σ" lets the question weigh as much as all of them,
"q=1" as much as the best unit. The pools come from the lane functions the engine uses; only the
variants are written here, so none of them is engine code.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from benchmarks.ir import default_collection
from core.eval import beir as ireval
from core.infra.config import FusionMethod, Lane, RetrievalConfig, load_retrieval_config
from core.question.intent_cues import detect_act
from core.retrieval.fusion import fused_scores, normalise_bm25
from core.retrieval.hdc.encoding import HdcQuery
from core.retrieval.hdc.index import HdcIndex
from core.retrieval.lanes import bm25_pool, hdc_pool
from core.text.tokenizer import tokenize
from core.units import ACT_PREFERRED_ROLES, Caller

Scores = Mapping[str, float]
FEEDBACK = (
    "none",
    "best 1",
    "best 2",
    "best 3",
    "by score 2, q=Σ",
    "by score 3, q=Σ",
    "by score 5, q=Σ",
    "by score 2, q=1",
    "by score 5, q=1",
    "by score 10, q=1",
)


def weighted_feedback(
    index: HdcIndex, query: HdcQuery, raw: Scores, ranked: Sequence[str], question_weight: float | None
) -> HdcQuery:
    """The question bundled with `ranked`'s units by a weighted per-bit majority (Rocchio)."""
    if query.text is None or not ranked:
        return query
    weights = np.array([raw[uid] / raw[ranked[0]] for uid in ranked])
    members = np.vstack([query.text[None], *[index.text_vector(uid)[None] for uid in ranked]])
    weights = np.concatenate([[weights.sum() if question_weight is None else question_weight], weights])
    bits = np.unpackbits(members.view(np.uint8), axis=1)
    text = np.packbits(weights @ bits * 2 > weights.sum()).view(np.uint64)
    return HdcQuery(text=text, role=query.role, act=query.act, tokens=query.tokens)


def feedback_query(name: str, index: HdcIndex, query: HdcQuery, raw: Scores) -> HdcQuery:
    ranked = list(raw)
    if name == "none":
        return query
    depth = int(name.split(",")[0].split()[-1])
    if name.startswith("best"):
        return index.with_feedback(query, ranked[:depth])
    return weighted_feedback(index, query, raw, ranked[:depth], None if name.endswith("Σ") else 1.0)


def _scaled(scores: Scores, how: str) -> dict[str, float]:
    values = np.array(list(scores.values()))
    if not len(values):
        return {}
    if how == "z":
        centre, spread = values.mean(), values.std() or 1.0
    else:
        centre, spread = values.min(), (values.max() - values.min()) or 1.0
    return {uid: (score - centre) / spread for uid, score in scores.items()}


def _combsum(lanes: Mapping[Lane, Scores], how: str, hdc_weight: float) -> dict[str, float]:
    fused = dict(_scaled(lanes[Lane.BM25], how))
    for uid, score in _scaled(lanes[Lane.HDC], how).items():
        fused[uid] = fused.get(uid, 0.0) + hdc_weight * score
    return fused


def fusions(config: RetrievalConfig) -> dict[str, Callable[[Mapping[Lane, Scores]], Scores]]:
    fusion = config.fusion
    no_bonus = fusion.model_copy(update={"agreement_bonus": 0.0})
    rrf = fusion.model_copy(update={"method": FusionMethod.RRF})

    def by_top(lanes: Mapping[Lane, Scores]) -> Scores:
        top = max(lanes[Lane.HDC].values(), default=0.0)
        hdc = {uid: score / top for uid, score in lanes[Lane.HDC].items()} if top > 0 else {}
        return fused_scores({Lane.BM25: lanes[Lane.BM25], Lane.HDC: hdc}, fusion)

    return {
        "weighted": lambda lanes: fused_scores(lanes, fusion),
        "no bonus": lambda lanes: fused_scores(lanes, no_bonus),
        "rrf": lambda lanes: fused_scores(lanes, rrf),
        "hdc ÷ top": by_top,
        **{f"z {w}": (lambda lanes, w=w: _combsum(lanes, "z", w)) for w in (0.2, 0.5, 1.0)},
        **{f"min-max {w}": (lambda lanes, w=w: _combsum(lanes, "min-max", w)) for w in (0.2, 0.5)},
    }


def variants(
    collection: ireval.IrCollection, config: RetrievalConfig, feedback: Sequence[str] = FEEDBACK
) -> dict[str, dict[str, dict[str, float]]]:
    """feedback variant → fusion variant → {"ndcg@10", "recall@100", "mrr@10"}."""
    view = collection.kb.view(Caller())
    indexes = ireval.LaneIndexes.build(view, config)
    methods = fusions(config)
    runs: dict[str, dict[str, ireval.Run]] = {name: {} for name in feedback}
    for qid, question in sorted(collection.queries.items()):
        act, _ = detect_act(question)
        terms = tokenize(question)
        raw = bm25_pool(indexes.bm25, terms, ACT_PREFERRED_ROLES[act], config.bm25.lane_pool)
        plain = indexes.hdc.query(terms, act)
        for name in feedback:
            hdc = hdc_pool(indexes.hdc, feedback_query(name, indexes.hdc, plain, raw), config.hdc)
            lanes = {Lane.BM25: normalise_bm25(raw), Lane.HDC: hdc}
            for method, fuse in methods.items():
                ranked = sorted(fuse(lanes).items(), key=lambda kv: (-kv[1], kv[0]))
                runs[name].setdefault(method, {})[qid] = dict(ranked[: ireval.RUN_DEPTH])
    return {name: ireval.measure(by_method, collection.qrels) for name, by_method in runs.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ir_variants", description=__doc__.splitlines()[0])
    parser.add_argument("--beir", type=Path, default=None, help="a BEIR folder (default: nfcorpus)")
    args = parser.parse_args(argv)
    table = variants(ireval.load_beir(args.beir or default_collection()), load_retrieval_config())
    methods = list(next(iter(table.values())))
    print("| feedback | " + " | ".join(methods) + " |")
    print("|---|" + "---:|" * len(methods))
    for name, row in table.items():
        cells = [f"{row[m]['ndcg@10']:.4f} / {row[m]['recall@100']:.4f}" for m in methods]
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
