"""The collector's frozen objects: kept out of collections until released, and never counted one
by one by the CLI's promotion of its young objects (core/infra/collector.py)."""

from __future__ import annotations

import gc
import weakref

import pytest

from core.infra import collector


class Marker:
    """An object the collector tracks, to find in its generations."""


def _in_generation(obj: object, generation: int) -> bool:
    return any(o is obj for o in gc.get_objects(generation))


def test_a_promotion_moves_young_objects_to_the_oldest_generation() -> None:
    collector.back_into_collections()
    young = Marker()
    assert _in_generation(young, 0)
    collector.promote_young()
    assert _in_generation(young, 2) and gc.get_freeze_count() == 0


def test_a_promotion_neither_releases_nor_counts_what_is_kept_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """`gc.get_freeze_count()` walks every frozen object (~50 ms a million): after a test app froze
    1.3M of them, each in-process CLI call paid it (docs/testing.md, h41suite9)."""
    kept = Marker()
    try:
        collector.keep_out_of_collections()
        monkeypatch.setattr(gc, "get_freeze_count", lambda: pytest.fail("counted the frozen objects"))
        collector.promote_young()
        assert not any(o is kept for o in gc.get_objects())
    finally:
        collector.back_into_collections()
    assert any(o is kept for o in gc.get_objects())


def test_full_collections_wait_while_young_ones_go_on_and_pauses_nest() -> None:
    before = gc.get_threshold()
    with collector.full_collections_paused():
        with collector.full_collections_paused():
            assert gc.get_threshold() == (*before[:2], collector.NO_FULL_COLLECTIONS)
        assert gc.get_threshold()[2] == collector.NO_FULL_COLLECTIONS  # the outer pause still holds
        cyclic = Marker()
        cyclic.me = cyclic  # type: ignore[attr-defined]
        gone = weakref.ref(cyclic)
        del cyclic
        kept = [Marker() for _ in range(before[0] * (before[1] + 1) + 1)]  # young collections run
        assert gone() is None and kept  # they freed the cycle, with no collect() called
    assert gc.get_threshold() == before
