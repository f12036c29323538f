"""Choose the conversation-focus threshold (core/memory/position.py `Focus`) by cross-validation
over CoQA's development stories.

    python -m scripts.coqa_conversations --mrptui .venv/bin/mrptui --data ../shared/qa/coqa-dev --out rows-T.jsonl
    python -m scripts.learn_focus 0=rows-0.jsonl 0.03=rows-0.03.jsonl 0.555=rows-0.555.jsonl … [--write]

Each rows file scores every turn of every story asked as one conversation, run with "focus":
{"min_prior": T} in core/memory/data/position_weights.json (0: the focus is never accepted; the
candidates are the buckets' priors: before, next, same). Stories are split in 5 folds (sorted ids, round robin); each fold's
threshold is the one with the best mean F1 over all turns of the other folds (memory must never
cost, so not the context-dependent turns alone), and its F1 on the fold itself is the held-out
figure. `--write` stores the threshold the whole set chooses, with the folds' figures, in
core/memory/data/position_weights.json under "focus".
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict

from core.memory.position import WEIGHTS

FOLDS = 5


def _rows(path: str) -> dict[tuple[str, int], dict]:
    with open(path, encoding="utf-8") as f:
        return {(r["story"], r["turn"]): r for r in map(json.loads, f)}


def _f1(rows: dict[tuple[str, int], dict], stories: set[str], dependent: bool = False) -> float:
    picked = [
        r["f1"] for (story, _), r in rows.items() if story in stories and (r["context_dependent"] or not dependent)
    ]
    return sum(picked) / max(1, len(picked))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("runs", nargs="+", help="THRESHOLD=ROWS.jsonl")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    runs = {float(t): _rows(p) for t, p in (run.split("=", 1) for run in args.runs)}
    stories = sorted({story for rows in runs.values() for story, _ in rows})
    folds: dict[int, set[str]] = defaultdict(set)
    for index, story in enumerate(stories):
        folds[index % FOLDS].add(story)
    never = runs.get(0.0)
    report = []
    for fold, held in sorted(folds.items()):
        train = set(stories) - held
        # The strictest threshold on a tie: the data could not tell them apart, so fail closed.
        chosen = max(sorted(runs), key=lambda t: (round(_f1(runs[t], train), 6), t))
        entry = {"fold": fold, "threshold": chosen, "f1": round(100 * _f1(runs[chosen], held), 2)}
        entry["f1_context_dependent"] = round(100 * _f1(runs[chosen], held, dependent=True), 2)
        if never is not None:
            entry["f1_never"] = round(100 * _f1(never, held), 2)
            entry["f1_context_dependent_never"] = round(100 * _f1(never, held, dependent=True), 2)
        report.append(entry)
    chosen = max(sorted(runs), key=lambda t: (round(_f1(runs[t], set(stories)), 6), t))
    print(json.dumps({"min_prior": chosen, "cross_validated": report}, indent=1))
    if args.write:
        payload = json.loads(WEIGHTS.read_text(encoding="utf-8"))
        payload["focus"] = {
            "min_prior": chosen,
            "learned_by": "python -m scripts.learn_focus THRESHOLD=ROWS.jsonl ... --write",
            "stories": len(stories),
            "cross_validated": report,
        }
        WEIGHTS.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
