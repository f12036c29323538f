"""The sample KB's size as the READMEs state it: a new author checks their own `mrptui check` total
against these figures, so a unit added or removed must move them too."""

from __future__ import annotations

import json
import re
from pathlib import Path

from core.kb.knowledge_base import KnowledgeBase


def test_the_readme_states_the_sample_kb_units_and_questions(root: Path, sample_kb: Path) -> None:
    readme = (root / "README.md").read_text(encoding="utf-8")
    units = re.search(r"`sample_kb/` \((\d+) units", readme)
    questions = re.search(r"`queries.json` has (\d+)\s+labelled questions", readme)
    assert units and questions
    assert int(units[1]) == len(KnowledgeBase.load([sample_kb]).units)
    assert int(questions[1]) == len(json.loads((sample_kb / "queries.json").read_text(encoding="utf-8")))
