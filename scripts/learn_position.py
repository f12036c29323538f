"""Learn the conversation-position priors (core/memory/position.py) from CoQA's development stories.

    python -m scripts.learn_position --data ../shared/qa/coqa-dev [--train even] [--write]

1. **Instances.** Every story is its own KB (`stories/<id>.txt`), opened as mrptui opens it. For
   every turn after the first, kb-fast retrieves for the question as asked (no memory) and each
   pooled candidate gets the features: its fused score, and its bucket (same, next, before,
   further) against the *anchor*: the units kb-fast kept for the latest earlier turn that kept any
   (at run time, the units that turn's answer cited). A candidate is **right** when the turn's
   gold rationale starts in it; a turn none of whose candidates is right is skipped.
2. **Fit.** A conditional logit over each turn's candidates (softmax of w · features), maximising
   Σ log P(right) − λ‖w‖² by gradient ascent (numpy). A bucket's prior is its weight (less the
   lowest bucket's) over the score's weight: how much fused score the bucket is worth.
3. **Report.** On the stories not trained on (`--train even`: the odd ones by sorted id), how often
   the right unit ranks first by the fused score alone and with the priors added.
`--write` stores the priors and these figures in core/memory/data/position_weights.json.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections import defaultdict
from pathlib import Path

import numpy as np

from core.memory.position import BUCKETS, WEIGHTS, bucket

LAMBDA = 0.01
STEPS = 800
RATE = 0.5
FEATURES = ("score", *BUCKETS)
Instance = tuple[str, np.ndarray, np.ndarray]  # story, features (candidates × FEATURES), right (0/1)


def _line_of(story: str, offset: int) -> int:
    return story.count("\n", 0, offset) + 1


def story_instances(data: Path, story_id: str, turns: list[dict]) -> list[Instance]:
    from core.kernel.calls import retrieve_bounded
    from core.kernel.contract import KnowledgePlugin, PluginType, Request, RunContext
    from core.kernel.session import Session
    from core.question.intent_cues import question_cues
    from core.units import Caller, Intent

    path = data / "stories" / f"{story_id}.txt"
    text = path.read_text(encoding="utf-8")
    session = Session.open([path])
    plugin: KnowledgePlugin = session.registry.get("kb-fast", PluginType.KB)  # type: ignore[assignment]
    caller = Caller()
    view = session.view(caller)
    units = [u for f in sorted({u.location.file for u in view.units if u.location}) for u in view.in_file(f)]
    order = {u.id: i for i, u in enumerate(units)}
    lines = [(u.location.line if u.location else 0, u.location.col if u.location else 0, u.id) for u in units]
    timeout = session.engine_config.budgets.plugin_timeout_ms
    out: list[Instance] = []
    anchor: list[int] = []
    for turn in sorted(turns, key=lambda t: t["turn"]):
        request = Request(question=turn["question"], caller=caller)
        intent = Intent(act=question_cues(turn["question"]).act, target=turn["question"], output="text")
        result = retrieve_bounded(plugin, RunContext(request=request, view=view, services=None), intent, timeout)
        candidates = list(result.outcome.candidates) if result.outcome else []
        start = turn.get("rationale_start", -1)
        gold = _unit_at(lines, _line_of(text, start)) if start >= 0 else None
        if anchor and gold is not None:
            # Every unit of the story is a candidate, a unit no lane pooled with score 0: at run
            # time the anchor's neighbours are pooled whatever the question's words.
            scores = {c.id: c.score for c in candidates}
            rows, right = [], []
            for unit in units:
                offset = min((order[unit.id] - a for a in anchor), key=abs)
                rows.append([scores.get(unit.id, 0.0)] + [float(bucket(offset) == b) for b in BUCKETS])
                right.append(float(unit.id == gold))
            out.append((story_id, np.array(rows), np.array(right)))
        kept = [order[c.id] for c in candidates if c.kept and c.id in order]
        anchor = kept or anchor
    return out


def _unit_at(lines: list[tuple[int, int, str]], line: int) -> str | None:
    """The unit a line of the story belongs to: the last one starting at or before it."""
    found = [uid for start, _, uid in lines if start <= line]
    return found[-1] if found else None


def fit(data: list[Instance]) -> np.ndarray:
    w = np.zeros(len(FEATURES))
    for _ in range(STEPS):
        grad = -2 * LAMBDA * w
        for _, x, y in data:
            s = x @ w
            e = np.exp(s - s.max())
            p = e / e.sum()
            q = y / y.sum()
            grad += (q[:, None] * x).sum(axis=0) - (p[:, None] * x).sum(axis=0)
        w += RATE * grad / len(data)
    return w


def priors(w: np.ndarray) -> dict[str, float]:
    """Each bucket's weight in fused-score units. A softmax over one turn's candidates is unchanged
    by a constant added to every bucket, so only the buckets' differences are learned: the lowest
    is set to 0, so a prior only ever raises a unit, never takes one below a cut-off that retrieval
    alone passed. A score weight ≤ 0 (the score told nothing) gives no priors."""
    lowest = float(w[1:].min())
    return {b: round((float(w[1 + k]) - lowest) / w[0], 4) if w[0] > 0 else 0.0 for k, b in enumerate(BUCKETS)}


def top1(w: np.ndarray, data: list[Instance]) -> float:
    return sum(bool(y[int(np.argmax(x @ w))]) for _, x, y in data) / max(1, len(data))


def write_weights(path: Path, payload: dict) -> None:
    """The priors and their figures into `path`, keeping the block learn_focus.py learns there
    ("focus": the focus decision's threshold and support), which this script does not compute."""
    focus = json.loads(path.read_text(encoding="utf-8")).get("focus") if path.exists() else None
    path.write_text(json.dumps({**payload, **({"focus": focus} if focus else {})}, indent=1) + "\n", encoding="utf-8")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--train", choices=("even", "all"), default="even")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    # Each story's index cache goes to a folder of its own, never the user's.
    os.environ["MRPTUI_CACHE_DIR"] = tempfile.mkdtemp(prefix="learn-position-")
    by_story: dict[str, list[dict]] = defaultdict(list)
    for line in (args.data / "turns.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            turn = json.loads(line)
            by_story[turn["story"]].append(turn)
    stories = sorted(by_story)
    train = set(stories[::2]) if args.train == "even" else set(stories)
    data = [i for s in stories for i in story_instances(args.data, s, by_story[s])]
    learn = [i for i in data if i[0] in train]
    test = [i for i in data if i[0] not in train] or learn
    w = fit(learn)
    learned = priors(w)
    alone = np.eye(len(FEATURES))[0]
    report = {
        "instances": len(learn),
        "stories": len(train),
        "held_out": {
            "instances": len(test),
            "top1_score_alone": round(top1(alone, test), 4),
            "top1_with_priors": round(top1(w, test), 4),
        },
    }
    print(json.dumps({"logit": dict(zip(FEATURES, map(float, w))), "priors": learned, **report}, indent=1))
    if args.write:
        learned_by = f"python -m scripts.learn_position --data ../shared/qa/coqa-dev --train {args.train} --write"
        write_weights(WEIGHTS, {"weights": learned, "learned_by": learned_by, **report})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
