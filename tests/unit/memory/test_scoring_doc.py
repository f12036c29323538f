"""docs/scoring.md's worked example runs against the code it documents."""

from __future__ import annotations

import re
from pathlib import Path


def test_the_worked_example_in_scoring_md_holds(root: Path) -> None:
    text = (root / "docs" / "scoring.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    assert len(blocks) == 3 and blocks[1].count("assert") >= 12 and blocks[2].count("assert") >= 8
    assert blocks[0].count("assert") >= 5  # BM25's pruned top-k
    for block in blocks:
        exec(compile(block, "docs/scoring.md", "exec"), {})
