"""CoQA conversations asked as `mrptui eval` conversations: each story one process, its turns one
in-memory session, scored by the judge's own functions (`<data>/judge.py`), one row per turn as
`judge.py --out` writes them. On 9 stories (155 turns) every answer was the one judge.py's mode (b)
(`ask --session` per turn) gave, in 33 s instead of 425 s.

    python -m scripts.coqa_conversations --mrptui .venv/bin/mrptui --data ../shared/qa/coqa-dev --out rows.jsonl [--limit N]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType


def _judge(data: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("coqa_judge", data / "judge.py")
    if spec is None or spec.loader is None:
        raise SystemExit(f"{data / 'judge.py'}: not found")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def story_rows(judge: ModuleType, mrptui: str, data: Path, story: str, turns: list[dict]) -> list[dict]:
    with tempfile.TemporaryDirectory() as home:
        env = judge.child_env(home, False)
        queries = [
            {
                "id": f"t{t['turn']}",
                "question": t["question"],
                "expect_evidence": [],
                "must_not_appear": [],
                "conversation": story,
            }
            for t in turns
        ]
        path = Path(home) / "queries.json"
        path.write_text(json.dumps(queries, ensure_ascii=False), encoding="utf-8")
        kb = data / "stories" / f"{story}.txt"
        cmd = [mrptui, "eval", str(path), "--kb", str(kb), "--kb-plugin", "kb-fast", "--json"]
        proc = subprocess.run(cmd, capture_output=True, text=True, encoding="utf-8", env=env, check=False)
        got = {int(r["id"][1:]): r for r in json.loads(proc.stdout)["queries"]}
    return [
        judge.score(
            t,
            "b",
            {k: got[t["turn"]].get(k) or "" for k in ("status", "answer")}
            | {"resolved": got[t["turn"]].get("resolved") or []},
        )
        for t in turns
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--mrptui", required=True)
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--limit", type=int, default=0, help="stories, stratified as judge.py picks them (0: all)")
    args = ap.parse_args(argv)
    judge = _judge(args.data)
    turns = judge.load(args.data)
    rows = []
    for story in judge.pick_stories(turns, args.limit, 0):
        rows += story_rows(judge, args.mrptui, args.data, story, [t for t in turns if t["story"] == story])
        print(story, file=sys.stderr)
    with open(args.out, "w", encoding="utf-8") as f:
        f.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    dependent = [r for r in rows if r["context_dependent"]]
    print(
        f"turns {len(rows)}: F1 {100 * judge.mean(r['f1'] for r in rows):.1f}; context-dependent {len(dependent)}: "
        f"F1 {100 * judge.mean(r['f1'] for r in dependent):.1f}; abstained {sum(r['abstained'] for r in rows)}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
