"""Loading a large rules file (issue 14: 10,000 rules took over 60 s while placing each rule's line).

python -m benchmarks.rules_load [COUNT ...]
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from benchmarks import measure, repeats, row
from core.retrieval.rules import load_rules

OPS = ("rules_load",)
COUNTS = (2_000, 10_000)
REPEATS = 3


def rules_file(count: int, folder: Path) -> Path:
    """`count` two-premise rules, one per line, as an author's generated file would hold them."""
    rules = [
        {
            "id": f"rule_{i}",
            "when": [{"s": "?x", "r": "uses", "o": "?y"}, {"s": "?y", "r": "provides", "o": f"?c{i}"}],
            "then": {"s": "?x", "r": "has_capability", "o": f"?c{i}"},
            "weight": 0.9,
        }
        for i in range(count)
    ]
    path = folder / "thinkingdb.json"
    path.write_text('{"rules": [\n' + ",\n".join(json.dumps(r) for r in rules) + "\n]}\n", encoding="utf-8")
    return path


def run(sizes: list[int] | None = None) -> list[dict]:
    """Rows at 2,000 and 10,000 rules (the issue's figures), whatever KB sizes are asked for."""
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for count in COUNTS:
            path = rules_file(count, Path(folder))
            times, peak = measure([lambda: load_rules(path)] * repeats(REPEATS))
            rows.append(row("mrptui", count, "rules_load", times, peak))
    return rows


if __name__ == "__main__":
    for found in run([int(a) for a in sys.argv[1:]]):
        print(json.dumps(found))
