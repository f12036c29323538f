"""Learn the referent weights (core/memory/referents.py) from CoQA's development conversations.

    python -m scripts.learn_referents --data ../shared/qa/coqa-dev [--write] [--target 0.75]

1. **Instances.** For every turn after the first whose question has a third-person pronoun, and
   each pronoun group in it (he, she, it, they): the mentions memory would offer at run time
   (core/memory/mentions.py), built from the two turns before it: their questions, their answers
   (the gold answer stands for the engine's lead; yes/no/unknown say no one) and the story
   paragraph holding the earlier turn's rationale (at run time, the unit the answer cited), and the
   whole story for counting how often each is said (at run time, the cited unit's file). The
   candidates are the agreeing mentions with their features; one is **right** when its head word
   (a name's last word, a noun phrase's noun) occurs in the turn's own gold rationale span, and
   "none of them" is right when no candidate is.
2. **Fit.** A conditional logit over each instance's candidates and "none" (score 0):
   maximise Σ log P(right) − λ‖w‖², by gradient ascent (numpy). The feature "bias" lets the
   model say how likely any candidate is against none.
3. **Thresholds.** The stories in FOLDS folds (sorted ids, every FOLDS-th): weights fitted on the
   other folds choose, on the held-out fold, the best candidate when its probability ≥ t. Per
   pronoun group, the shipped t is the lowest of the grid whose pooled held-out precision (the
   chosen candidate is right) reaches --target on at least MIN_REWRITES rewrites; a group that
   never does gets t = 1 (never rewritten: asked as written, and the answer says so).
`--write` stores the weights fitted on every story, t, and these figures in
core/memory/data/referent_weights.json.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from pathlib import Path

import numpy as np

from core.memory.entities import entity_of
from core.memory.mentions import TurnText, mentions_of
from core.memory.referents import FEATURES, GROUPS, WEIGHTS, Model, candidates, pronoun_groups

FOLDS = 5
LAMBDA = 0.01
STEPS = 600
RATE = 0.5
GRID = [round(0.05 * i, 2) for i in range(2, 20)]
# A threshold is trusted only on at least this many held-out rewrites.
MIN_REWRITES = 5
BACK = 2  # turns back memory offers mentions from (as sd-symbolic does)
_NO_LEAD = {"yes", "no", "unknown"}
_WORD = re.compile(r"[a-z0-9']+")


def paragraphs(story: str) -> list[tuple[int, int]]:
    """(start, end) of each blank-line separated paragraph: the units a plain-text KB makes."""
    spans, at = [], 0
    for block in re.split(r"(\n\s*\n)", story):
        if block.strip() and not re.fullmatch(r"\n\s*\n", block):
            spans.append((at, at + len(block)))
        at += len(block)
    return spans


def cited(story: str, turn: dict) -> tuple[str, ...]:
    start = turn.get("rationale_start", -1)
    return tuple(story[a:b] for a, b in paragraphs(story) if a <= start < b)


def instances(data: Path) -> list[tuple[str, np.ndarray, np.ndarray, str]]:
    """(story id, candidate features, right flags, pronoun group) per pronoun group of a follow-up."""
    turns = [
        json.loads(line) for line in (data / "turns.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    by_story: dict[str, list[dict]] = defaultdict(list)
    for t in turns:
        by_story[t["story"]].append(t)
    zero = Model({k: 0.0 for k in FEATURES}, {g: 1.0 for g in GROUPS})
    out = []
    for sid in sorted(by_story):
        story = (data / "stories" / f"{sid}.txt").read_text(encoding="utf-8")
        ts = sorted(by_story[sid], key=lambda t: t["turn"])
        for i, turn in enumerate(ts[1:], start=1):
            groups = pronoun_groups(turn["question"])
            if not groups:
                continue
            earlier = [
                TurnText(
                    back,
                    ts[i - 1 - back]["question"],
                    "" if ts[i - 1 - back]["answer"].strip(". ").lower() in _NO_LEAD else ts[i - 1 - back]["answer"],
                    cited(story, ts[i - 1 - back]) if back == 0 else (),
                    entity=entity_of(ts[i - 1 - back]["question"]),
                    document=story if back == 0 else "",
                )
                for back in range(min(BACK, i))
            ]
            mentions = mentions_of(earlier)
            rationale = set(_WORD.findall(turn["rationale"].lower()))
            for group in groups:
                found = candidates(group, mentions, zero, story)
                if not found:
                    continue
                x = np.array([[c.features[k] for k in FEATURES] for c in found])
                y = np.array([_head(c.text) in rationale for c in found], dtype=float)
                out.append((sid, x, y, group))
    return out


def _head(text: str) -> str:
    words = _WORD.findall(text.lower())
    return words[-1] if words else ""


def fit(data: list[tuple[str, np.ndarray, np.ndarray]]) -> np.ndarray:
    w = np.zeros(len(FEATURES))
    for _ in range(STEPS):
        grad = -2 * LAMBDA * w
        for _, x, y, _ in data:
            s = x @ w
            top = max(0.0, s.max())
            e = np.exp(s - top)
            p = e / (np.exp(-top) + e.sum())
            # d/dw log P(a right one) = E[x | right] - E[x]; with none right, "none" is right.
            q = e * y / (e * y).sum() if y.any() else np.zeros_like(e)
            grad += (q[:, None] * x).sum(axis=0) - (p[:, None] * x).sum(axis=0)
        w += RATE * grad / len(data)
    return w


def decide(w: np.ndarray, data) -> list[tuple[str, float, bool]]:
    """(pronoun group, probability of the best candidate, whether it is right) per instance."""
    out = []
    for _, x, y, group in data:
        s = x @ w
        e = np.exp(s)
        p = e / (1 + e.sum())
        best = int(np.argmax(s))
        out.append((group, float(p[best]), bool(y[best])))
    return out


def curve(decisions: list[tuple[str, float, bool]]) -> list[tuple[float, int, float]]:
    rows = []
    for t in GRID:
        chosen = [right for _, p, right in decisions if p >= t]
        rows.append((t, len(chosen), sum(chosen) / len(chosen) if chosen else 0.0))
    return rows


def _unseen(w: np.ndarray, data, thresholds: dict[str, float]) -> dict[str, float]:
    """Rewrites and their precision at the learned thresholds on stories the weights never saw."""
    chosen = [right for group, p, right in decide(w, data) if p >= thresholds[group]]
    return {
        "instances": len(data),
        "rewrites": len(chosen),
        "precision": round(sum(chosen) / len(chosen), 4) if chosen else 0.0,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="folder with turns.jsonl and stories/")
    ap.add_argument("--target", type=float, default=0.4, help="held-out precision the threshold must reach")
    ap.add_argument("--write", action="store_true", help=f"store the weights in {WEIGHTS}")
    ap.add_argument("--cache", help="keep the instances in this file and read them back when it exists")
    ap.add_argument(
        "--train",
        choices=("all", "even"),
        default="all",
        help="learn from every story, or only from the even ones (sorted ids) and report on the odd half",
    )
    args = ap.parse_args(argv)
    cache = Path(args.cache) if args.cache else None
    if cache is not None and cache.exists():
        import pickle

        data = pickle.loads(cache.read_bytes())
    else:
        data = instances(args.data)
        if cache is not None:
            import pickle

            cache.write_bytes(pickle.dumps(data))
    every = sorted({d[0] for d in data})
    odd_half: dict[str, float] = {}
    if args.train == "even":
        unseen = [d for d in data if every.index(d[0]) % 2]
        data = [d for d in data if not every.index(d[0]) % 2]
    stories = sorted({d[0] for d in data})
    fold_of = {sid: i % FOLDS for i, sid in enumerate(stories)}
    held: list[tuple[str, float, bool]] = []
    for fold in range(FOLDS):
        w = fit([d for d in data if fold_of[d[0]] != fold])
        mine = decide(w, [d for d in data if fold_of[d[0]] == fold])
        held += mine
        print(f"fold {fold}: {len(mine)} instances, best candidate right {sum(r for _, _, r in mine)}")
    thresholds, figures = {}, {}
    for group in GROUPS:
        rows = curve([d for d in held if d[0] == group])
        print(f"{group}: t, rewrites, held-out precision")
        for t, n, prec in rows:
            print(f"  {t:.2f} {n:4d} {prec:.3f}")
        # The lowest t whose held-out precision reaches the target; a group that never does is never
        # rewritten (its threshold is above any probability).
        found = next(((t, n, prec) for t, n, prec in rows if n >= MIN_REWRITES and prec >= args.target), None)
        thresholds[group] = found[0] if found else 1.0
        figures[group] = {"rewrites": found[1], "precision": round(found[2], 4)} if found else {"rewrites": 0}
    w = fit(data)
    weights = dict(zip(FEATURES, (round(float(v), 4) for v in w)))
    print(
        f"instances {len(data)} from {len(stories)} stories; any candidate right in "
        f"{sum(bool(d[2].sum()) for d in data)}; thresholds {thresholds}; held out {figures}"
    )
    print("weights", weights)
    if args.train == "even":
        odd_half = _unseen(w, unseen, thresholds)
        print("odd half (never learned from):", odd_half)
    if args.write:
        WEIGHTS.parent.mkdir(exist_ok=True)
        WEIGHTS.write_text(
            json.dumps(
                {
                    "weights": weights,
                    "thresholds": thresholds,
                    "learned_by": (
                        "python -m scripts.learn_referents --data ../shared/qa/coqa-dev "
                        f"--target {args.target} --train {args.train} --write"
                    ),
                    "instances": len(data),
                    "stories": len(stories),
                    "held_out": {"folds": FOLDS, "target": args.target, "by_group": figures, "odd_half": odd_half},
                },
                indent=1,
            )
            + "\n",
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
