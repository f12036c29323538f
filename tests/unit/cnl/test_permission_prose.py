"""Issue 35: running prose is text. Every shared BEIR corpus and the shared QA stories load with no
document, paragraph or file withdrawn for a permission label (their titles and texts are text).

Reads ../shared beside the checkout (CI lays it there) or beside the worktrees' folder; skipped,
saying so, where it is absent."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.cnl import read_file
from core.infra.diagnostics import PERMISSION_CODES

ROOT = Path(__file__).resolve().parents[3]
# Beside the checkout (CI's clone), or beside the folder of worktrees a developer's checkout sits in.
SHARED = next(
    (folder for folder in (ROOT.parent / "shared", ROOT.parent.parent / "shared") if folder.is_dir()),
    ROOT.parent / "shared",
)
CORPORA = sorted((SHARED / "ir").glob("*/corpus.jsonl"))
STORIES = [
    folder
    for folder in (SHARED / "qa" / "squad2-dev" / "articles", SHARED / "qa" / "coqa-dev" / "stories")
    if folder.is_dir()
]


@pytest.mark.skipif(
    not CORPORA, reason=f"no shared BEIR corpus at {SHARED / 'ir'} (../shared is laid beside the checkout in CI)"
)
@pytest.mark.parametrize("corpus", CORPORA, ids=[path.parent.name for path in CORPORA])
def test_a_shared_beir_corpus_loads_with_nothing_withdrawn(corpus: Path) -> None:
    units, diagnostics = read_file(corpus)
    errors = [d.format() for d in diagnostics if d.is_error or d.code in PERMISSION_CODES]
    assert errors == [] and units


@pytest.mark.skipif(
    not STORIES, reason=f"no shared QA stories under {SHARED / 'qa'} (../shared is laid beside the checkout in CI)"
)
@pytest.mark.parametrize("folder", STORIES, ids=[path.parent.name for path in STORIES])
def test_the_shared_qa_stories_load_with_nothing_withdrawn(folder: Path) -> None:
    files = sorted(folder.glob("*.txt"))
    assert files
    for path in files:
        units, diagnostics = read_file(path)
        withdrawn = [d.format() for d in diagnostics if d.code in PERMISSION_CODES]
        assert withdrawn == [] and units, path
