"""Can a learned answerability model decide answer/abstain better than the support score? Fitted
and measured on a SQuAD 2.0 split, cross-validated across articles (docs/answers.md has the
figures this prints).

    python -m scripts.train_answerability --data ../shared/qa/squad2-dev [--record rec.jsonl]
        [--target f1|answerable] [--sentences top|all]

1. **Record.** Every question is answered by the engine in process, one KB per article (what
   `mrptui eval --squad` and judge.py run). For a question with a typed lead, every lead the
   short answer weighs (core/answer/answerability observers) is kept with its features
   (core/support.lead_features), whether it passes the checks other than the support score,
   whether the engine's support check passes it, and its SQuAD token F1 against the gold
   answers; every other question keeps the engine's own outcome. `--record FILE` keeps this (a
   few minutes on 2 workers) and reads it back when it exists.
2. **Replay.** The support check as shipped: the first lead of the best-covering sentences it
   passes answers, else the question is abstained on. A model with weights w and a threshold t:
   the first lead (in trying order) passing the other checks with P ≥ t answers, else it
   abstains. SQuAD 2.0 F1 is computed over all questions of the articles in question, as
   judge.py does. (A weak answer's replan is not replayed: see docs/answers.md.)
3. **Cross-validation.** The articles in FOLDS folds (sorted slugs, every FOLDS-th): for each fold
   the model is fitted on the other articles' leads, t is chosen on those articles (the lowest t
   of the grid within TIE of their best F1: ties go to answering), and the held-out fold is
   scored, beside the support check on the same fold. Then the curves of both on every
   article: abstention on answerable against abstention on unanswerable questions.

Standard library and numpy only: L2-regularised logistic regression by Newton's method on
standardised features. It writes no weights: the engine does not use a model (docs/answers.md).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path

import numpy as np

from core.answer.answerability import FEATURES
from core.eval.answer_checks import best_scores

FOLDS = 6
# F1 points within which a lower threshold counts as a tie with the best.
TIE = 0.1
GRID = tuple(round(0.05 + 0.01 * i, 2) for i in range(91))
L2 = 1.0
NEWTON_STEPS = 25
# The curves' points: the model's thresholds, and support scores the shipped check could require.
MODEL_CURVE = (0.1, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6)
SHARE_CURVE = (0.5, 0.6, 0.67, 0.75, 0.8, 0.81, 0.9, 1.0)


# --- recording --------------------------------------------------------------------------------


def _record_article(job: tuple[str, str]) -> list[dict]:
    from core.answer import answerability
    from core.eval import squad
    from core.kernel.session import Session

    data, article = job
    collection = squad.load_squad(Path(data))
    seen: dict[str, list] = {}
    current = [""]

    def note(question: str, candidates) -> None:
        # A weak answer is replanned: only the first plan's leads are the check's to decide.
        seen.setdefault(current[0], list(candidates))

    answerability.OBSERVERS.append(note)
    try:
        session = Session.open([collection.files[article]], None)
        rows = []
        for question in (q for q in collection.questions if q.article == article):
            current[0] = question.id
            row = squad.score(question, *squad._ask(session, question.question))
            leads = [
                {
                    "lead": c.lead,
                    "f1": best_scores(question.answers, c.lead)[1] if question.answers else 0.0,
                    "rules": c.rules,
                    "supported": c.supported,
                    "top": c.top,
                    "x": dict(c.features),
                }
                for c in seen.get(question.id, [])
            ]
            rows.append(
                {
                    "id": question.id,
                    "article": article,
                    "impossible": question.is_impossible,
                    "abstained": row.abstained,
                    "f1": row.f1,
                    "short": question.id in seen,
                    "leads": leads,
                }
            )
    finally:
        answerability.OBSERVERS.remove(note)
    print(f"recorded {article}: {len(rows)} questions", file=sys.stderr, flush=True)
    return rows


def record(data: str, workers: int) -> list[dict]:
    from core.eval import squad

    articles = sorted({q.article for q in squad.load_squad(Path(data)).questions})
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        parts = pool.map(_record_article, [(data, a) for a in articles])
    return [row for part in parts for row in part]


# --- the model --------------------------------------------------------------------------------


def fit(x: np.ndarray, y: np.ndarray) -> dict:
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / scale])
    w = np.zeros(z.shape[1])
    penalty = np.full(z.shape[1], L2)
    penalty[0] = 0.0
    for _ in range(NEWTON_STEPS):
        p = 1 / (1 + np.exp(-np.clip(z @ w, -30, 30)))
        grad = z.T @ (p - y) + penalty * w
        hess = (z * (p * (1 - p))[:, None]).T @ z + np.diag(penalty + 1e-9)
        w -= np.linalg.solve(hess, grad)
    return {"bias": float(w[0]), "weights": w[1:].tolist(), "mean": mean.tolist(), "scale": scale.tolist()}


def probabilities(model: dict, x: np.ndarray) -> np.ndarray:
    z = (x - np.array(model["mean"])) / np.array(model["scale"])
    return 1 / (1 + np.exp(-np.clip(model["bias"] + z @ np.array(model["weights"]), -30, 30)))


def features(leads: Iterable[dict]) -> np.ndarray:
    """The recorded features (by name) in FEATURES order."""
    return np.array([[lead["x"][name] for name in FEATURES] for lead in leads], dtype=float).reshape(-1, len(FEATURES))


def labels(leads: Sequence[dict], impossible: Sequence[bool], target: str) -> np.ndarray:
    """What the model learns per lead: the question is answerable (`answerable`), or answerable
    with this lead right enough to earn more than an unanswerable one costs (`f1`: lead F1 ≥ 0.5)."""
    if target == "answerable":
        return np.array([not imp for imp in impossible], dtype=float)
    return np.array([(not imp) and lead["f1"] >= 0.5 for lead, imp in zip(leads, impossible)], dtype=float)


def training_set(rows: Sequence[dict], target: str) -> tuple[np.ndarray, np.ndarray]:
    leads = [(lead, row["impossible"]) for row in rows for lead in row["leads"] if lead["rules"]]
    return features(lead for lead, _ in leads), labels([lead for lead, _ in leads], [imp for _, imp in leads], target)


# --- replay -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Weighed:
    """Each question's leads in trying order (padded with score -1): a score per lead (a
    probability, or pass/fail as 1/0 for the support check) and its F1, and the engine's own
    outcome for questions the short answer did not weigh."""

    impossible: np.ndarray
    short: np.ndarray
    score: np.ndarray  # (questions, leads)
    lead_f1: np.ndarray  # (questions, leads)
    abstained: np.ndarray
    f1: np.ndarray


def weigh(rows: Sequence[dict], score) -> Weighed:
    """`score(leads)`: an array of one score per lead; only leads passing the other checks count."""
    kept = [[lead for lead in row["leads"] if lead["rules"]] for row in rows]
    width = max((len(k) for k in kept), default=0) or 1
    s = np.full((len(rows), width), -1.0)
    f1 = np.zeros((len(rows), width))
    owners = [(i, j, lead) for i, leads in enumerate(kept) for j, lead in enumerate(leads)]
    if owners:
        at = ([i for i, _, _ in owners], [j for _, j, _ in owners])
        s[at] = score([lead for _, _, lead in owners])
        f1[at] = [lead["f1"] for _, _, lead in owners]
    return Weighed(
        impossible=np.array([r["impossible"] for r in rows], dtype=bool),
        short=np.array([r["short"] for r in rows], dtype=bool),
        score=s,
        lead_f1=f1,
        abstained=np.array([r["abstained"] for r in rows], dtype=bool),
        f1=np.array([r["f1"] for r in rows], dtype=float),
    )


def by_model(model: dict):
    return lambda leads: probabilities(model, features(leads))


def by_check(share: float | None = None):
    """The shipped support check (None), or the other checks with a support score ≥ `share`."""
    if share is None:
        return lambda leads: np.array([float(lead["supported"] and lead["top"]) for lead in leads])
    return lambda leads: np.array([float(lead["x"]["share"] >= share and lead["top"]) for lead in leads])


def replay(w: Weighed, threshold: float) -> dict:
    """SQuAD 2.0 F1 and the abstention rates: the first lead scoring ≥ threshold answers, else
    the question is abstained on; a question the short answer did not weigh keeps its outcome."""
    passing = w.score >= threshold
    first = passing.argmax(axis=1)
    lead_f1 = w.lead_f1[np.arange(len(first)), first]
    answers = w.short & passing.any(axis=1)
    gave_up = np.where(w.short, ~answers, w.abstained)
    score = np.where(w.short, np.where(answers, np.where(w.impossible, 0.0, lead_f1), w.impossible.astype(float)), w.f1)
    answered = ~gave_up & ~w.impossible

    def share(mask: np.ndarray, of: np.ndarray) -> float:
        return 100 * float(mask[of].mean()) if of.any() else 0.0

    return {
        "f1": 100 * float(score.mean()) if len(score) else 0.0,
        "noans_abstain": share(gave_up, w.impossible),
        "hasans_abstain": share(gave_up, ~w.impossible),
        "lead_f1": 100 * float(score[answered].mean()) if answered.any() else 0.0,
        "n": len(score),
    }


def choose_threshold(w: Weighed) -> tuple[float, float]:
    scores = [(t, replay(w, t)["f1"]) for t in GRID]
    best = max(f for _, f in scores)
    return next((t, f) for t, f in scores if f >= best - TIE)


def folds(articles: Iterable[str]) -> list[list[str]]:
    ordered = sorted(articles)
    return [ordered[i::FOLDS] for i in range(FOLDS)]


def cross_validate(rows: Sequence[dict], target: str) -> tuple[list[dict], dict, dict]:
    """Per fold: the threshold chosen on the other articles and the held-out figures of the
    model and of the support check; then both pooled over every held-out question."""
    results, parts, checks = [], [], []
    for i, held in enumerate(folds({r["article"] for r in rows})):
        train = [r for r in rows if r["article"] not in held]
        test = [r for r in rows if r["article"] in held]
        model = fit(*training_set(train, target))
        t, train_f1 = choose_threshold(weigh(train, by_model(model)))
        tested = weigh(test, by_model(model))
        check = weigh(test, by_check())
        # Each fold's scores shifted by its own threshold, so that one threshold (0) pools them.
        parts.append(replace(tested, score=np.where(tested.score >= 0, tested.score - t, -2.0)))
        checks.append(check)
        results.append(
            {
                "fold": i,
                "held_out": held,
                "threshold": t,
                "train_f1": train_f1,
                "model": replay(tested, t),
                "check": replay(check, 1.0),
            }
        )
    return results, replay(_joined(parts), 0.0), replay(_joined(checks), 1.0)


def _joined(parts: Sequence[Weighed]) -> Weighed:
    """The folds' questions together, their lead columns padded to the widest fold's."""
    width = max(p.score.shape[1] for p in parts)

    def padded(a: np.ndarray, fill: float) -> np.ndarray:
        return np.pad(a, ((0, 0), (0, width - a.shape[1])), constant_values=fill)

    parts = [replace(p, score=padded(p.score, -2.0), lead_f1=padded(p.lead_f1, 0.0)) for p in parts]
    return Weighed(*(np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(Weighed)))


def _figures(r: dict) -> str:
    return f"{r['f1']:.2f} | {r['noans_abstain']:.1f}% | {r['hasans_abstain']:.1f}% | {r['lead_f1']:.1f}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="a SQuAD 2.0 folder of the JSONL layout")
    parser.add_argument("--record", help="keep the recorded leads in this JSONL file (read back when it exists)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--target", choices=("answerable", "f1"), default="f1")
    parser.add_argument(
        "--sentences",
        choices=("top", "all"),
        default="all",
        help="the model weighs the leads of the best-covering sentences only, or of the next best too",
    )
    args = parser.parse_args(argv)
    path = Path(args.record) if args.record else None
    if path is not None and path.exists():
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    else:
        rows = record(args.data, args.workers)
        if path is not None:
            path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    if args.sentences == "top":
        rows = [{**row, "leads": [lead for lead in row["leads"] if lead["top"]]} for row in rows]
    results, pooled, pooled_check = cross_validate(rows, args.target)
    print(
        "| fold | held-out articles | t | model F1 on the rest | held-out: model F1 | NoAns abstain | HasAns abstain "
        "| lead F1 | support check F1 | NoAns abstain | HasAns abstain | lead F1 |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r['fold']} | {', '.join(r['held_out'])} | {r['threshold']:.2f} | {r['train_f1']:.2f} | "
            f"{_figures(r['model'])} | {_figures(r['check'])} |"
        )
    print(f"pooled held-out, model: F1 | NoAns | HasAns | lead F1 = {_figures(pooled)} (n={pooled['n']})")
    print(f"pooled held-out, support check: {_figures(pooled_check)}")
    model = fit(*training_set(rows, args.target))
    t, f1 = choose_threshold(weigh(rows, by_model(model)))
    print(f"every article: t = {t:.2f}, F1 {f1:.2f}")
    print("| curve | F1 | NoAns abstain | HasAns abstain | lead F1 |")
    print("|---|---:|---:|---:|---:|")
    fitted = weigh(rows, by_model(model))
    for point in MODEL_CURVE:
        print(f"| model P ≥ {point:.2f} | {_figures(replay(fitted, point))} |")
    print(f"| support check as shipped | {_figures(replay(weigh(rows, by_check()), 1.0))} |")
    for share in SHARE_CURVE:
        print(f"| other checks, support ≥ {share:.2f} | {_figures(replay(weigh(rows, by_check(share)), 1.0))} |")
    weights = sorted(zip(FEATURES, model["weights"]), key=lambda kv: -abs(kv[1]))
    print("weights (standardised):", ", ".join(f"{k} {v:+.2f}" for k, v in weights))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
