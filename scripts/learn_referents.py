"""Learn the referent weights (core/memory/referents.py) from CoQA's development conversations.

    python -m scripts.learn_referents --data ../shared/qa/coqa-dev [--label sentence|span]
        [--target 0.7] [--write]

1. **Instances.** For every turn after the first whose question has a third-person pronoun, and
   each pronoun group in it (he, she, it, they): the mentions memory would offer at run time
   (core/memory/mentions.py), built from the two turns before it: their questions, their answers
   (the gold answer stands for the engine's lead; yes/no/unknown say no one) and the story
   paragraph holding the earlier turn's rationale (at run time, the unit the answer cited), the
   whole story for counting how often each is said (at run time, the cited unit's file), and the
   earlier turn's rationale and question placing it in the story (core/memory/passage.py; at run
   time its lead and question). The candidates are the agreeing mentions with their features;
   one is **right** when its head word (a name's last word, a noun phrase's noun) is the first of
   the candidates' said in the story sentence(s) holding the turn's own gold rationale span
   (`--label sentence`, shipped: what the answer's sentence is about) or occurs in the span
   itself (`--label span`), and "none of them" is right when no candidate is.
2. **Fit.** A conditional logit over each instance's candidates and "none" (score 0):
   maximise Σ log P(right) − λ‖w‖², by gradient ascent (numpy). The feature "bias" lets the
   model say how likely any candidate is against none.
3. **Thresholds.** The stories in FOLDS folds (sorted ids, every FOLDS-th): weights fitted on the
   other folds choose, on the held-out fold, the best candidate when its probability ≥ t. Per
   pronoun group, the shipped t is the one of the grid with the most right rewrites held out
   (the decision's recall, so its F1) among those whose pooled held-out precision (the chosen
   candidate is right) reaches --target on at least MIN_REWRITES rewrites; a group that never
   does gets t = 1 (never rewritten: asked as written, and the answer says so).
4. **Report.** The whole of 2-3 by nested cross-validation: each outer fold's weights and
   thresholds come from the other folds only (thresholds by an inner cross-validation there),
   and are applied to the fold's stories; each fold's and the pooled rewrites and precision are
   printed and kept. `--ceiling` also prints how often the referent the answer's sentence is
   about (`--label sentence`) is said in the gold span itself: what `--label span` precision a
   resolver that is always right about the referent would reach.
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
from core.memory.passage import Passage
from core.memory.referents import FEATURES, GROUPS, WEIGHTS, Model, candidates, pronoun_groups
from scripts.referent_precision import rationale_sentence

FOLDS = 5
LAMBDA = 0.01
STEPS = 600
RATE = 0.5
GRID = [round(0.05 * i, 2) for i in range(2, 20)]
# A threshold is trusted only on at least this many held-out rewrites.
MIN_REWRITES = 10
BACK = 2  # turns back memory offers mentions from (as sd-symbolic does)
_NO_LEAD = {"yes", "no", "unknown"}
_WORD = re.compile(r"[a-z0-9']+")
# story id, candidate features (candidates × FEATURES), right flags, pronoun group
Instance = tuple[str, np.ndarray, np.ndarray, str]
Decision = tuple[str, float, bool]  # pronoun group, the best candidate's probability, whether it is right


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


def instances(data: Path, label: str = "span") -> list[Instance]:
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
            gold = turn["rationale"] if label == "span" else rationale_sentence(data, turn)
            said = _WORD.findall(gold.lower())
            # The previous answer's place in the story: its gold rationale stands for the lead's
            # sentence (core/memory/followup.py places the lead and question the same way).
            last = ts[i - 1]
            passage = Passage.of(story, f"{last['rationale']} {last['question']}")
            for group in groups:
                found = candidates(group, mentions, zero, story, passage)
                if not found:
                    continue
                x = np.array([[c.features[k] for k in FEATURES] for c in found])
                y = _right(found, said, first=label == "sentence")
                out.append((sid, x, y, group))
    return out


def _right(found: list, said: list[str], first: bool) -> np.ndarray:
    """1 for a candidate whose noun is said; with `first`, only for those said first among the
    candidates (what the answer's sentence is about, where English puts it: one of three names
    in "Petrel crosses from Harwick to Sandmere" is who "it" is)."""
    at = {w: i for i, w in reversed(list(enumerate(said)))}
    where = [at.get(_head(c.text)) for c in found]
    soonest = min((i for i in where if i is not None), default=None)
    return np.array([i is not None and (not first or i == soonest) for i in where], dtype=float)


def _head(text: str) -> str:
    words = _WORD.findall(text.lower())
    return words[-1] if words else ""


def fit(data: list[Instance]) -> np.ndarray:
    """The conditional logit's weights, by gradient ascent on every instance's candidates at once."""
    x = np.concatenate([d[1] for d in data])
    y = np.concatenate([d[2] for d in data])
    of = np.concatenate([np.full(len(d[1]), i) for i, d in enumerate(data)])
    w = np.zeros(len(FEATURES))
    for _ in range(STEPS):
        e = np.exp(x @ w)
        p = e / (1.0 + np.bincount(of, e, len(data)))[of]
        # d/dw log P(a right one) = E[x | right] - E[x]; with none right, "none" is right.
        right = np.bincount(of, e * y, len(data))[of]
        q = np.divide(e * y, right, out=np.zeros_like(e), where=right > 0)
        grad = -2 * LAMBDA * w + ((q - p)[:, None] * x).sum(axis=0)
        w += RATE * grad / len(data)
    return w


def decide(w: np.ndarray, data: list[Instance]) -> list[Decision]:
    """(pronoun group, probability of the best candidate, whether it is right) per instance."""
    out = []
    for _, x, y, group in data:
        s = x @ w
        e = np.exp(s)
        p = e / (1 + e.sum())
        best = int(np.argmax(s))
        out.append((group, float(p[best]), bool(y[best])))
    return out


def curve(decisions: list[Decision]) -> list[tuple[float, int, float]]:
    rows = []
    for t in GRID:
        chosen = [right for _, p, right in decisions if p >= t]
        rows.append((t, len(chosen), sum(chosen) / len(chosen) if chosen else 0.0))
    return rows


def held_out(data: list[Instance], folds: int) -> list[Decision]:
    """Each instance's decision (in `data`'s order) by weights fitted on the other folds' stories
    (sorted ids, every `folds`-th together): never by weights that saw the story."""
    stories = sorted({d[0] for d in data})
    fold_of = {sid: i % folds for i, sid in enumerate(stories)}
    out: dict[int, Decision] = {}
    for fold in range(folds):
        mine = [i for i, d in enumerate(data) if fold_of[d[0]] == fold]
        w = fit([d for d in data if fold_of[d[0]] != fold])
        out.update(zip(mine, decide(w, [data[i] for i in mine])))
    return [out[i] for i in range(len(data))]


def thresholds_of(decisions: list[Decision], target: float, show: bool = False) -> dict[str, float]:
    """Per pronoun group the t with the most right held-out rewrites among those whose precision
    reaches `target` on at least MIN_REWRITES rewrites; a group that never does gets 1 (never
    rewritten)."""
    out = {}
    for group in GROUPS:
        rows = curve([d for d in decisions if d[0] == group])
        if show:
            print(f"{group}: t, rewrites, held-out precision")
            for t, n, prec in rows:
                print(f"  {t:.2f} {n:4d} {prec:.3f}")
        # The most right rewrites (the decision's recall, so its F1 at this precision) among the
        # thresholds held out at or above the target; a tie goes to the stricter one.
        feasible = [(round(n * prec), t) for t, n, prec in rows if n >= MIN_REWRITES and prec >= target]
        out[group] = max(feasible)[1] if feasible else 1.0
    return out


def rewrites(decisions: list[Decision], thresholds: dict[str, float]) -> dict:
    """How many decisions rewrite at `thresholds`, and how many of those are right, per group and in all."""
    out: dict = {}
    for group in (*GROUPS, "all"):
        chosen = [r for g, p, r in decisions if (group in ("all", g)) and p >= thresholds[g]]
        out[group] = {
            "instances": sum(group in ("all", g) for g, _, _ in decisions),
            "rewrites": len(chosen),
            "right": sum(chosen),
            "precision": round(sum(chosen) / len(chosen), 4) if chosen else None,
        }
    return out


def cross_validated(data: list[Instance], target: float) -> dict:
    """Nested cross-validation over stories: for each outer fold, weights fitted and thresholds chosen
    (by an inner cross-validation) on the other folds only, then applied to the fold's stories.
    The pooled figures are what the shipped procedure does on stories it never saw."""
    stories = sorted({d[0] for d in data})
    fold_of = {sid: i % FOLDS for i, sid in enumerate(stories)}
    pooled: list[Decision] = []
    chosen, by_fold = [], []
    for fold in range(FOLDS):
        train = [d for d in data if fold_of[d[0]] != fold]
        thresholds = thresholds_of(held_out(train, FOLDS - 1), target)
        chosen.append(thresholds)
        mine = [
            (g, p if p >= thresholds[g] else -1.0, r)
            for g, p, r in decide(fit(train), [d for d in data if fold_of[d[0]] == fold])
        ]
        pooled += mine
        by_fold.append(rewrites(mine, {g: 0.0 for g in GROUPS})["all"])
        print(f"outer fold {fold}: thresholds {thresholds}; {by_fold[-1]}")
    return {
        "folds": FOLDS,
        "thresholds_by_fold": chosen,
        "by_fold": by_fold,
        **rewrites(pooled, {g: 0.0 for g in GROUPS}),
    }


def ceiling(sentence: list[Instance], span: list[Instance]) -> str:
    """Of the follow-ups whose answer's sentence is about one of the candidates, how many have
    that candidate said in the gold span too (the instances of both labels come in one order)."""
    about = [(a[2], b[2]) for a, b in zip(sentence, span, strict=True) if a[2].any()]
    both = sum(bool((right * said).any()) for right, said in about)
    return (
        f"span ceiling: the sentence's referent is said in the span for {both} of {len(about)} "
        f"follow-ups ({both / max(len(about), 1):.1%})"
    )


def _load(args) -> list[Instance]:
    import pickle

    cache = Path(args.cache) if args.cache else None
    if cache is not None and cache.exists():
        return pickle.loads(cache.read_bytes())
    data = instances(args.data, args.label)
    if cache is not None:
        cache.write_bytes(pickle.dumps(data))
    return data


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="folder with turns.jsonl and stories/")
    ap.add_argument("--target", type=float, default=0.7, help="held-out precision a threshold must reach")
    ap.add_argument("--write", action="store_true", help=f"store the weights in {WEIGHTS}")
    ap.add_argument(
        "--label",
        choices=("span", "sentence"),
        default="sentence",
        help="a candidate is right when its noun is in the gold rationale span, or in the sentence(s) holding it",
    )
    ap.add_argument("--cache", help="keep the instances in this file and read them back when it exists")
    ap.add_argument("--ceiling", action="store_true", help="print how often the sentence's referent is in the span")
    args = ap.parse_args(argv)
    data = _load(args)
    if args.ceiling:
        print(ceiling(instances(args.data, "sentence"), instances(args.data, "span")))
    report = cross_validated(data, args.target)
    print("nested cross-validation (never fitted to the stories it reports on):", json.dumps(report["all"]))
    for group in GROUPS:
        print(f"  {group}: {report[group]}")
    thresholds = thresholds_of(held_out(data, FOLDS), args.target, show=True)
    weights = dict(zip(FEATURES, (round(float(v), 4) for v in fit(data))))
    stories = len({d[0] for d in data})
    print(f"instances {len(data)} from {stories} stories; any candidate right in {sum(bool(d[2].sum()) for d in data)}")
    print("thresholds", thresholds)
    print("weights", weights)
    if args.write:
        WEIGHTS.parent.mkdir(exist_ok=True)
        learned = {
            "weights": weights,
            "thresholds": thresholds,
            "learned_by": (
                "python -m scripts.learn_referents --data ../shared/qa/coqa-dev "
                f"--label {args.label} --target {args.target} --write"
            ),
            "label": args.label,
            "instances": len(data),
            "stories": stories,
            "cross_validated": report,
        }
        WEIGHTS.write_text(json.dumps(learned, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
