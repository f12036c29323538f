"""Choose the conversation focus's learned numbers (core/memory/position.py `Focus`) by
cross-validation over CoQA's development stories.

    python -m scripts.coqa_conversations --mrptui .venv/bin/mrptui --data ../shared/qa/coqa-dev --out rows-T.jsonl
    python -m scripts.learn_focus 0=rows-0.jsonl 0.03=rows-0.03.jsonl 0.555=rows-0.555.jsonl … [--write]
    python -m scripts.learn_focus --key min_support 0.81=rows-0.81.jsonl 0.5=rows-0.5.jsonl 0=rows-0.jsonl … [--write]

`--key min_prior` (the default): each rows file scores every turn of every story asked as one
conversation, run with "focus": {"min_prior": T} in core/memory/data/position_weights.json (0:
the focus is never accepted; the candidates are the buckets' priors: before, next, same).
`--key min_support`: run with "focus": {…, "min_support": {"value": T}}, the least support score
(core/answer/support.support_score) a lead in the accepted focus unit needs; the candidates are
the general threshold (support.SUPPORT_THRESHOLD: the focus changes nothing) and the scores below
it a sentence can have. Stories are split in 5 folds (sorted ids, round robin); each fold's value
is the one with the best mean F1 over all turns of the other folds (memory must never cost, so not
the context-dependent turns alone), the strictest (largest) on a tie, and its F1 on the fold
itself is the held-out figure, beside the baseline's (0 / the general threshold). `--write`
stores the value the whole set chooses, with the folds' figures, in position_weights.json.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict

from core.answer.support import SUPPORT_THRESHOLD
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
    ap.add_argument("--key", choices=("min_prior", "min_support"), default="min_prior")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    runs = {float(t): _rows(p) for t, p in (run.split("=", 1) for run in args.runs)}
    stories = sorted({story for rows in runs.values() for story, _ in rows})
    folds: dict[int, set[str]] = defaultdict(set)
    for index, story in enumerate(stories):
        folds[index % FOLDS].add(story)
    label, base = ("never", 0.0) if args.key == "min_prior" else ("general", SUPPORT_THRESHOLD)
    baseline = runs.get(base)
    report = []
    for fold, held in sorted(folds.items()):
        train = set(stories) - held
        # The strictest value on a tie: the data could not tell them apart, so fail closed.
        chosen = max(sorted(runs), key=lambda t: (round(_f1(runs[t], train), 6), t))
        entry = {"fold": fold, "threshold": chosen, "f1": round(100 * _f1(runs[chosen], held), 2)}
        entry["f1_context_dependent"] = round(100 * _f1(runs[chosen], held, dependent=True), 2)
        if baseline is not None:
            entry[f"f1_{label}"] = round(100 * _f1(baseline, held), 2)
            entry[f"f1_context_dependent_{label}"] = round(100 * _f1(baseline, held, dependent=True), 2)
        report.append(entry)
    chosen = max(sorted(runs), key=lambda t: (round(_f1(runs[t], set(stories)), 6), t))
    print(json.dumps({args.key: chosen, "cross_validated": report}, indent=1))
    if args.write:
        payload = json.loads(WEIGHTS.read_text(encoding="utf-8"))
        learned = {
            "learned_by": f"python -m scripts.learn_focus --key {args.key} THRESHOLD=ROWS.jsonl ... --write",
            "stories": len(stories),
            "candidates": sorted(runs),
            "cross_validated": report,
        }
        focus = payload.setdefault("focus", {})
        if args.key == "min_prior":
            focus.update({"min_prior": chosen, **learned})
        else:
            focus["min_support"] = {"value": chosen, **learned}
        WEIGHTS.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
