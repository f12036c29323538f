"""Learn the confidence a sentence aligned with a yes/no question's claim needs to answer it
(core/answer/claim_alignment.py) from CoQA's development conversations.

    python -m scripts.learn_yes_no --data ../shared/qa/coqa-dev [--record rec.jsonl] [--workers 1] [--write]

1. **Record.** Every story is its own knowledge base, and each of its turns that asks for a yes
   or a no (core/question: expected type YES_NO) is answered by the engine in process, alone (no
   conversation memory). Every sentence's decision (core/answer/polarity.read: Yes, No or cannot
   tell, with its alignment confidence) is kept in the order the engine weighs them, with the
   turn's gold answer (yes, no, unknown, or free text). `--record FILE` keeps this and reads it
   back when it exists.
2. **Replay.** With threshold t, a turn is answered by the first decision that says Yes or No
   with confidence ≥ t; otherwise it is left open. Its **utility** is +1 for the gold word,
   −1 for the other word or a yes/no to a question CoQA answers otherwise (a span, or
   "unknown"), 0 for leaving it open: a wrong yes/no costs what a right one gains. Also shown:
   accuracy over gold yes/no turns (open counts wrong, as the judge's polarity row).
3. **Split.** The conversations sorted by id: even positions learn (t is the lowest of the grid
   within TIE of their best utility: ties go to answering), odd positions report; then the whole
   set. `--write` stores t, learned on the even half, in core/answer/data/yes_no_threshold.json.
4. **Cross-validation.** The conversations in FOLDS folds by position; each fold's turns are
   answered with t learned on the other folds, and its right / wrong / open counts are shown.

`--memory` asks every turn of a conversation in order with conversation memory (as `mrptui
eval` runs a conversation), and records its yes/no turns as they are asked there.

Standard library only beside the engine.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
from collections.abc import Sequence
from pathlib import Path

GRID = tuple(round(0.05 * i, 2) for i in range(21))
# Utility points within which a lower threshold counts as a tie with the best.
TIE = 0.0
FOLDS = 5
THRESHOLD_FILE = Path(__file__).resolve().parent.parent / "core" / "answer" / "data" / "yes_no_threshold.json"


def _record_story(job: tuple[str, str, list[dict], bool]) -> list[dict]:
    from core.answer import claim_alignment
    from core.kernel.contract import Caller, Request
    from core.kernel.events import AnswerReady
    from core.kernel.session import Session
    from core.memory.eval_conversations import Conversations
    from core.question import Question
    from core.question.answer_types import AnswerType

    data, story, turns, memory = job
    seen: dict[str, list] = {}
    current = [""]

    def note(question: str, decisions) -> None:
        # A weak answer is replanned: the first plan's evidence is the decision's to weigh.
        seen.setdefault(
            current[0],
            [
                (d.polarity.value, round(d.confidence, 4), d.reason[:120], " ".join(s.text for s in d.because)[:200])
                for d in decisions
            ],
        )

    claim_alignment.OBSERVERS.append(note)
    try:
        session = Session.open([Path(data) / "stories" / f"{story}.txt"], None)
        conversations = Conversations(session)
        rows = []
        for turn in turns:
            asks_yes_no = Question(turn["question"]).expected.type is AnswerType.YES_NO
            if not (asks_yes_no or memory):
                continue
            current[0] = key = f"{story}#{turn['turn']}"
            # With memory every turn is asked in order, so the conversation holds the turns before it.
            request = Request(question=turn["question"], caller=Caller())
            events = conversations.run(story if memory else None, request)
            if not asks_yes_no:
                continue
            ready = [e for e in events if isinstance(e, AnswerReady)]
            answer = ready[-1].answer if ready else ""
            rows.append(
                {
                    "story": story,
                    "turn": turn["turn"],
                    "question": turn["question"],
                    "gold": turn["answer_type"] if turn["answer_type"] != "free" else turn["answer"],
                    "engine": answer.split(",")[0][:40],
                    "decisions": seen.get(key),
                    "rationale": turn["rationale"].strip(),
                }
            )
    finally:
        claim_alignment.OBSERVERS.remove(note)
    print(f"recorded {story}: {len(rows)} yes/no questions", file=sys.stderr, flush=True)
    return rows


def record(data: str, workers: int, memory: bool) -> list[dict]:
    by_story: dict[str, list[dict]] = {}
    for line in (Path(data) / "turns.jsonl").read_text(encoding="utf-8").splitlines():
        turn = json.loads(line)
        by_story.setdefault(turn["story"], []).append(turn)
    jobs = [(data, story, turns, memory) for story, turns in sorted(by_story.items())]
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        parts = pool.map(_record_story, jobs)
    return [row for part in parts for row in part]


def answer_of(decisions: Sequence[Sequence] | None, t: float) -> str | None:
    for polarity, confidence, *_ in decisions or ():
        if polarity in ("Yes", "No") and confidence >= t:
            return polarity.lower()
    return None


def score(rows: Sequence[dict], t: float) -> dict:
    """Utility, and the judge's polarity accuracy, of threshold t over the observed rows."""
    utility = right = answered = polar = 0
    for row in rows:
        said = answer_of(row["decisions"], t)
        polar += row["gold"] in ("yes", "no")
        if said is None:
            continue
        answered += 1
        hit = said == row["gold"]
        right += hit
        utility += 1 if hit else -1
    return {"t": t, "utility": utility, "right": right, "answered": answered, "rows": len(rows), "polar": polar}


def learn(rows: Sequence[dict]) -> float:
    scores = [score(rows, t) for t in GRID]
    best = max(s["utility"] for s in scores)
    return min(s["t"] for s in scores if s["utility"] >= best - TIE)


def _line(name: str, s: dict) -> str:
    accuracy = s["right"] / s["polar"] if s["polar"] else 0.0
    return (
        f"{name:<14} t={s['t']:.2f} utility {s['utility']:+d}  answered {s['answered']}/{s['rows']}  "
        f"right {s['right']}  polarity accuracy {accuracy:.1%} of {s['polar']} gold yes/no"
    )


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--record", help="keep the recorded decisions here (read back when it exists)")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--memory", action="store_true", help="ask every turn in order, with conversation memory")
    ap.add_argument("--write", action="store_true", help=f"store the learned threshold in {THRESHOLD_FILE.name}")
    args = ap.parse_args(argv)
    saved = Path(args.record) if args.record else None
    if saved and saved.exists():
        rows = [json.loads(line) for line in saved.read_text(encoding="utf-8").splitlines()]
    else:
        rows = record(args.data, args.workers, args.memory)
        if saved:
            saved.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    observed = [r for r in rows if r["decisions"] is not None]
    stories = sorted({r["story"] for r in observed})
    learning = {s for i, s in enumerate(stories) if i % 2 == 0}
    train = [r for r in observed if r["story"] in learning]
    held = [r for r in observed if r["story"] not in learning]
    t = learn(train)
    print(f"{len(rows)} yes/no questions, {len(observed)} decided by alignment, {len(stories)} stories")
    print("grid on the learning half:")
    for g in GRID:
        print("  " + _line("learn", score(train, g)))
    print(_line("learning half", score(train, t)))
    print(_line("held-out half", score(held, t)))
    print(_line("all", score(observed, t)))
    print(_line("held-out t=0", score(held, 0.0)))
    for fold in range(FOLDS):
        held_fold = [r for r in observed if stories.index(r["story"]) % FOLDS == fold]
        rest = [r for r in observed if stories.index(r["story"]) % FOLDS != fold]
        s = score(held_fold, learn(rest))
        wrong = s["answered"] - s["right"]
        print(f"fold {fold}: t={s['t']:.2f} right {s['right']} wrong {wrong} open {s['rows'] - s['answered']}")
    if args.write:
        learned = f"CoQA dev, even-position conversations ({len(learning)} of {len(stories)}): scripts/learn_yes_no.py"
        THRESHOLD_FILE.write_text(
            json.dumps({"threshold": t, "learned_on": learned}, indent=2) + "\n", encoding="utf-8"
        )
        print(f"wrote {THRESHOLD_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
