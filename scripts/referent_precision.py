"""How often memory's pronoun rewrites put in the right referent, on CoQA conversations.

    python -m scripts.referent_precision ROWS.jsonl --data ../shared/qa/coqa-dev

ROWS.jsonl: the per-turn rows of `judge.py --out` (mode b carries each turn's `resolved` notes).
A rewrite "he → Farina (confidence …)" is right when the referent's noun (its last word) occurs in
the turn's gold rationale span (turns.jsonl); the count of its words occurring at all is printed too,
and the count whose noun is in the story sentence(s) holding the span: a span is often the answer
alone ("17", "Pakistan"), which names nobody, though its sentence names the person asked about.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

_WORD = re.compile(r"[a-z0-9']+")
_NOTE = re.compile(r"^(\S+(?:/\S+)*) → (.*?) \((?:confidence|the subject)")


def rationale_sentence(data: Path, turn: dict) -> str:
    """The story text from the sentence start before the rationale span to the sentence end after it."""
    start, end = turn.get("rationale_start", -1), turn.get("rationale_end", -1)
    if start < 0:
        return turn["rationale"]
    story = (data / "stories" / f"{turn['story']}.txt").read_text(encoding="utf-8")
    begin = max(story.rfind(".", 0, start), story.rfind("\n", 0, start)) + 1
    stops = [at for at in (story.find(".", end), story.find("\n", end)) if at >= 0]
    return story[begin : min(stops, default=len(story))]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rows", type=Path)
    ap.add_argument("--data", type=Path, required=True, help="folder with turns.jsonl")
    args = ap.parse_args(argv)
    lines = (args.data / "turns.jsonl").read_text(encoding="utf-8").splitlines()
    turns = {(t["story"], t["turn"]): t for t in map(json.loads, filter(str.strip, lines))}
    rewrites = right = some = in_sentence = 0
    for row in map(json.loads, filter(str.strip, args.rows.read_text(encoding="utf-8").splitlines())):
        if row.get("mode") != "b":
            continue
        turn = turns[(row["story"], row["turn"])]
        rationale = set(_WORD.findall(turn["rationale"].lower()))
        sentence = set(_WORD.findall(rationale_sentence(args.data, turn).lower()))
        for note in row.get("resolved") or []:
            found = _NOTE.match(note)
            if found is None:
                continue
            words = _WORD.findall(found.group(2).lower())
            rewrites += 1
            right += bool(words) and words[-1] in rationale
            some += any(w in rationale for w in words)
            in_sentence += bool(words) and words[-1] in sentence

    def share(k: int) -> str:
        return f"{100 * k / rewrites:.1f}%" if rewrites else "n/a"

    print(
        f"referent rewrites {rewrites}; referent's noun in the gold rationale {right} ({share(right)}); "
        f"any of its words {some} ({share(some)}); its noun in the span's sentence {in_sentence} ({share(in_sentence)})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
