"""How often memory's pronoun rewrites put in the right referent, on CoQA conversations.

    python -m scripts.referent_precision ROWS.jsonl --data ../shared/qa/coqa-dev

ROWS.jsonl: the per-turn rows of `judge.py --out` (mode b carries each turn's `resolved` notes).
A rewrite "he → Farina (confidence …)" is right when the referent's noun (its last word) occurs in
the turn's gold rationale span (turns.jsonl); the count of its words occurring at all is printed too.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

_WORD = re.compile(r"[a-z0-9']+")
_NOTE = re.compile(r"^(\S+(?:/\S+)*) → (.*?) \((?:confidence|the subject)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rows", type=Path)
    ap.add_argument("--data", type=Path, required=True, help="folder with turns.jsonl")
    args = ap.parse_args(argv)
    lines = (args.data / "turns.jsonl").read_text(encoding="utf-8").splitlines()
    turns = {(t["story"], t["turn"]): t for t in map(json.loads, filter(str.strip, lines))}
    rewrites = right = some = 0
    for row in map(json.loads, filter(str.strip, args.rows.read_text(encoding="utf-8").splitlines())):
        if row.get("mode") != "b":
            continue
        rationale = set(_WORD.findall(turns[(row["story"], row["turn"])]["rationale"].lower()))
        for note in row.get("resolved") or []:
            found = _NOTE.match(note)
            if found is None:
                continue
            words = _WORD.findall(found.group(2).lower())
            rewrites += 1
            right += bool(words) and words[-1] in rationale
            some += any(w in rationale for w in words)

    def share(k: int) -> str:
        return f"{100 * k / rewrites:.1f}%" if rewrites else "n/a"

    print(
        f"referent rewrites {rewrites}; referent's noun in the gold rationale {right} ({share(right)}); "
        f"any of its words {some} ({share(some)})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
