"""A tiny BEIR collection (beekeeping, and one document off the topic) written as published: corpus.jsonl,
queries.jsonl (with a query nobody judged) and qrels/test.tsv."""

from __future__ import annotations

import json
from pathlib import Path

DOCS = [
    ("d1", "Hive swarming", "A colony swarms in late spring when the old queen leaves with half the workers."),
    ("d2", "Varroa mites", "Varroa mites feed on bee larvae; an oxalic acid treatment in winter reduces them."),
    ("d3", "Honey extraction", "Capped frames are uncapped with a hot knife and spun in an extractor."),
    ("d4", "Queen marking", "Beekeepers mark the queen with a dot of paint so she is easy to find."),
    ("d5", "Wax moths", "Wax moth larvae tunnel through stored comb; freezing the frames kills them."),
    ("d6", "Volcanic ash", "Ash from an eruption grounds aircraft because it melts inside jet engines."),
]
QUERIES = {"q1": "why does a colony swarm in spring", "q2": "how to treat varroa mites", "q3": "storing comb moths"}
QRELS = {"q1": {"d1": 2, "d4": 1}, "q2": {"d2": 2}, "q3": {"d5": 1}}


def write_beir(folder: Path, docs=DOCS, queries=QUERIES, qrels=QRELS) -> Path:
    (folder / "qrels").mkdir(parents=True)
    lines = [json.dumps({"_id": d, "title": t, "text": x, "metadata": {"url": f"http://x/{d}"}}) for d, t, x in docs]
    (folder / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    extra = {"q9": "a query nobody judged"}
    text = "\n".join(json.dumps({"_id": q, "text": t}) for q, t in {**queries, **extra}.items())
    (folder / "queries.jsonl").write_text(text + "\n", encoding="utf-8")
    rows = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t{s}" for q, ds in qrels.items() for d, s in ds.items()]
    (folder / "qrels" / "test.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return folder
