"""The KB load reports its progress file by file (core/infra/progress.py), and a callback that raises
`Cancelled` stops it, serially or while the build pool works, leaving a cache the next open
reads as if nothing had happened."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.infra.cancel import Cancelled
from core.infra.diagnostics import Code
from core.infra.progress import Estimate, LoadProgress
from core.kb.knowledge_base import KnowledgeBase
from core.kernel.session import Session
from core.store import SegmentStore
from core.store.pool import prebuild
from tests.support.store_kb import write_kb


def _units(kb: KnowledgeBase) -> list[str]:
    return [unit.model_dump_json() for unit in kb.units]


def test_load_reports_each_file_read_with_the_units_so_far(tmp_path: Path) -> None:
    write_kb(tmp_path / "kb", files=3, per_file=12)
    seen: list[LoadProgress] = []
    kb = KnowledgeBase.load([tmp_path / "kb"], SegmentStore(tmp_path / "cache"), progress=seen.append)
    assert seen[0] == LoadProgress("scanning", 0, 3)
    reading = [p for p in seen if p.stage == "reading"]
    assert [(p.done, p.total) for p in reading] == [(1, 3), (2, 3), (3, 3)]
    assert [p.units for p in reading] == sorted(p.units for p in reading) and reading[-1].units == kb.unit_count
    assert 0 < reading[0].units < kb.unit_count
    assert reading[0].left is not None and reading[-1].left == 0


def test_session_open_ends_its_progress_with_preparing(tmp_path: Path, config_path: Path) -> None:
    write_kb(tmp_path / "kb", files=2, per_file=5)
    seen: list[LoadProgress] = []
    session = Session.open([tmp_path / "kb"], config_path, progress=seen.append)
    assert seen[-1] == LoadProgress("preparing", 2, 2, session.kb.unit_count)


def test_a_load_cancelled_mid_way_leaves_a_cache_the_next_open_reads_whole(tmp_path: Path) -> None:
    write_kb(tmp_path / "kb", files=4, per_file=20)
    cache = tmp_path / "cache"

    def quit_after_two(progress: LoadProgress) -> None:
        if progress.stage == "reading" and progress.done == 2:
            raise Cancelled("the user quit")

    with pytest.raises(Cancelled):
        KnowledgeBase.load([tmp_path / "kb"], SegmentStore(cache), progress=quit_after_two)
    store = SegmentStore(cache)
    reopened = KnowledgeBase.load([tmp_path / "kb"], store)
    # The two files read before the quit come from the cache, the other two are built now.
    assert (store.loads, store.builds) == (2, 2)
    assert not [d for d in reopened.diagnostics if d.code is Code.INDEX_CACHE]
    assert _units(reopened) == _units(KnowledgeBase.load([tmp_path / "kb"], SegmentStore(tmp_path / "fresh")))


def test_the_build_pool_reports_finished_files_and_a_cancel_from_it_leaves_a_whole_cache(tmp_path: Path) -> None:
    write_kb(tmp_path / "kb", files=4, per_file=60)
    files = sorted((tmp_path / "kb").glob("*.md"))
    heard: list[LoadProgress] = []
    assert prebuild(files, SegmentStore(tmp_path / "whole"), workers=2, min_bytes=0, progress=heard.append) == len(
        files
    )
    seen = [(p.done, p.total) for p in heard]
    assert {p.stage for p in heard} == {"building"}
    assert seen[0] == (0, 4) and seen[-1] == (4, 4)
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)
    # No estimate before a file is built; once all are, nothing is left.
    assert heard[0].left is None and heard[-1].left == 0

    def quit_at_once(_: LoadProgress) -> None:
        raise Cancelled("the user quit")

    cache = tmp_path / "cache"
    with pytest.raises(Cancelled):
        prebuild(files, SegmentStore(cache), workers=2, min_bytes=0, progress=quit_at_once)
    store = SegmentStore(cache)
    reopened = KnowledgeBase.load([tmp_path / "kb"], store)
    assert store.loads + store.builds == len(files)
    assert not [d for d in reopened.diagnostics if d.code is Code.INDEX_CACHE]
    assert _units(reopened) == _units(KnowledgeBase.load([tmp_path / "kb"], SegmentStore(tmp_path / "fresh")))


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_estimate_goes_by_the_rate_so_far_and_counts_down_between_pieces() -> None:
    clock = _Clock()
    estimate = Estimate(100, clock)
    clock.now += 5
    assert estimate.left() is None  # nothing finished yet: no rate
    estimate.advance(25)
    assert estimate.left() == 15  # 25 in 5 s: 75 more take 15 s
    clock.now += 4
    assert estimate.left() == 11  # counts down while the next piece is in flight
    clock.now += 20
    assert estimate.left() == 0  # slower than the rate so far: never below zero
    estimate.advance(75)
    assert estimate.left() == 0


def test_parallel_workers_estimate_once_each_has_finished_a_piece() -> None:
    clock = _Clock()
    estimate = Estimate(100, clock, settle=2)
    clock.now += 5
    estimate.advance(10)
    assert estimate.left() is None  # the other worker's first piece is about to land too
    clock.now += 1
    estimate.advance(10)
    assert estimate.left() == 24  # 20 in 6 s: 80 more take 24 s
