"""A cold open's merged BM25 index is written a block of terms at a time (issue 41,
core/retrieval/bm25/merge.py): the folder it publishes does not depend on the block budget, and
a write that fails between blocks leaves no temp folder and still gives the view its index."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pytest

from core.kernel.session import Session
from core.retrieval.bm25 import merge
from core.retrieval.bm25.index import Bm25Index
from core.text.tokenizer import tokenize
from core.units import Caller, Role
from tests.support.store_kb import write_kb

CALLER = Caller(tags=frozenset({"crew:night", "support:eu"}), region="NORTH", as_of=dt.date(2019, 6, 1))
QUESTIONS = ("tide hive", "varroa mite swarm", "harbour chart datum", "queen")


def merged_folder(tmp_path: Path, kb_dir: Path, config_path: Path, name: str, monkeypatch) -> tuple[Path, Bm25Index]:
    cache = tmp_path / name
    monkeypatch.setenv("MRPTUI_CACHE_DIR", str(cache))
    session = Session([kb_dir], config_path)
    session.warm_up(CALLER)
    index = session.indexes.for_view(session.view(CALLER)).bm25
    assert isinstance(index, Bm25Index)
    (folder,) = (cache / "views").glob("bm25-*.idx")
    return folder, index


@pytest.fixture
def kb_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "kb"
    write_kb(folder, files=4, per_file=60)
    return folder


def test_the_merged_folder_is_the_same_bytes_whatever_the_block_budget(tmp_path, kb_dir, config_path, monkeypatch):
    monkeypatch.setattr(merge, "BLOCK_KEYS", 5)
    small, by_blocks = merged_folder(tmp_path, kb_dir, config_path, "small", monkeypatch)
    monkeypatch.setattr(merge, "BLOCK_KEYS", 1 << 40)
    whole, at_once = merged_folder(tmp_path, kb_dir, config_path, "whole", monkeypatch)
    names = sorted(path.name for path in whole.iterdir())
    assert names == sorted(path.name for path in small.iterdir()) and "keys.npy" in names
    for name in names:
        assert (small / name).read_bytes() == (whole / name).read_bytes(), name
    for question in QUESTIONS:
        terms = tokenize(question)
        assert by_blocks.top_k(terms, [Role.DEFINITION], 10) == at_once.top_k(terms, [Role.DEFINITION], 10)


def test_a_write_that_fails_between_blocks_leaves_no_temp_folder_and_merges_in_memory(
    tmp_path, kb_dir, config_path, monkeypatch
):
    monkeypatch.setattr(merge, "BLOCK_KEYS", 5)
    monkeypatch.setenv("MRPTUI_CACHE_DIR", str(tmp_path / "cache"))
    session = Session([kb_dir], config_path)
    parts = session.indexes.for_view(session.view(CALLER)).bm25
    blocks = merge.MergePlan.blocks

    def full_after_two(self, release=None):
        for number, block in enumerate(blocks(self, release)):
            if number == 2:
                raise OSError(28, "No space left on device")
            yield block

    monkeypatch.setattr(merge.MergePlan, "blocks", full_after_two)
    session.warm_up(CALLER)
    merged = session.indexes.for_view(session.view(CALLER)).bm25
    assert isinstance(merged, Bm25Index)
    assert not list((tmp_path / "cache" / "views").glob("*.idx"))
    assert not [p for p in (tmp_path / "cache" / "tmp").iterdir() if p.name.startswith(".tmp-")]
    for question in QUESTIONS:
        terms = tokenize(question)
        got, want = merged.top_k(terms, [], 10), parts.top_k(terms, [], 10)
        assert [u for u, _ in got] == [u for u, _ in want] and got
        np.testing.assert_allclose([v for _, v in got], [v for _, v in want], rtol=0, atol=1e-9)
