"""Part-of-speech tags kept in the index store (core/nlp/tag_store.py): remembered when a sentence is
tagged, written 0600 with the cache's keyed digest, read back instead of tagging again, ignored
when altered; the background pass rests between batches and stops when cancelled."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from core.nlp import tag_store
from core.nlp.tagging import tag_text

SENTENCES = [
    "The night ferry leaves Harwick at ten.",
    "Its crew of four checks the ramp before boarding.",
    "Passengers with bicycles board first.",
]


@pytest.fixture(autouse=True)
def fresh_memory():
    tag_store.clear_memory()
    tag_text.cache_clear()
    yield
    tag_store.clear_memory()
    tag_text.cache_clear()


def test_tags_round_trip_through_a_private_file(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    root.mkdir(mode=0o700)
    tagged = tag_store.warm(root, SENTENCES, tag_text)
    assert tagged == len(SENTENCES)
    path = tag_store.path_for(root)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    expected = {text: [t.tag for t in tag_text(text)] for text in SENTENCES}
    tag_store.clear_memory()
    assert tag_store.recall(SENTENCES[0]) is None
    assert tag_store.load(root) == len(SENTENCES)
    assert {text: tag_store.recall(text) for text in SENTENCES} == expected


def test_stored_tags_are_read_instead_of_tagging(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "cache"
    root.mkdir(mode=0o700)
    tag_store.warm(root, SENTENCES, tag_text)
    tag_store.clear_memory()
    tag_text.cache_clear()
    tag_store.load(root)

    def no_tagging(words):
        raise AssertionError("a stored sentence was tagged again")

    monkeypatch.setattr("core.nlp.tagging.tag", no_tagging)
    assert [t.word for t in tag_text(SENTENCES[1])][:2] == ["Its", "crew"]


def test_an_altered_file_is_ignored(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    root.mkdir(mode=0o700)
    tag_store.warm(root, SENTENCES, tag_text)
    path = tag_store.path_for(root)
    raw = bytearray(path.read_bytes())
    raw[-1] ^= 1  # one tag changed by something other than the store
    path.write_bytes(bytes(raw))
    tag_store.clear_memory()
    assert tag_store.load(root) == 0 and tag_store.recall(SENTENCES[2]) is None


def test_the_pass_rests_after_every_slice_stored_sentences_included_and_stops_when_cancelled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tag_store, "WARM_SLICE", 0.0)  # every sentence is a slice of its own
    rests: list[float] = []
    many = [f"Berth {n} is kept for the pilot boat." for n in range(7)]
    assert tag_store.warm(None, many[:3], tag_text) == 3
    # Stored sentences cost reading and hashing: they count toward the slice and its rest too.
    assert tag_store.warm(None, many, tag_text, rest=rests.append) == 4
    assert len(rests) == 7 and all(r >= 0 for r in rests)
    tag_store.clear_memory()
    tag_text.cache_clear()
    calls = iter(range(100))
    assert (
        tag_store.warm(None, [f"Gate {n} closes." for n in range(9)], tag_text, cancelled=lambda: next(calls) >= 4) == 4
    )


def test_the_pass_waits_while_the_caller_is_busy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tag_store, "WARM_SLICE", 0.0)
    rests: list[float] = []
    busy = iter([True, True, True, False])  # a question runs through the first slice's rest
    assert (
        tag_store.warm(
            None,
            ["Quay 4 opens at dawn.", "Quay 5 opens at noon."],
            tag_text,
            rest=rests.append,
            busy=lambda: next(busy, False),
        )
        == 2
    )
    assert rests.count(tag_store.WARM_WAIT) == 3 and len(rests) == 2 + 3
    waits = iter(range(100))
    # Cancelled while waiting: the pass stops instead of waiting for the question to end.
    assert (
        tag_store.warm(
            None,
            ["Quay 6 opens late.", "Quay 7 opens never."],
            tag_text,
            rest=rests.append,
            busy=lambda: True,
            cancelled=lambda: next(waits) >= 2,
        )
        == 1
    )


def test_a_cache_others_may_write_is_neither_read_nor_written(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    root.mkdir(mode=0o777)
    root.chmod(0o777)
    tag_store.warm(root, SENTENCES, tag_text)
    assert not (root / tag_store.FOLDER).exists()


def test_the_session_pass_tags_the_callers_view_and_stores_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from core.kernel.session import Session
    from core.store.location import CACHE_DIR_ENV, cache_root
    from core.units import Caller

    (tmp_path / "cache").mkdir(mode=0o700)
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "harbour.txt").write_text("Harbour notes\n\n" + " ".join(SENTENCES) + "\n", encoding="utf-8")
    session = Session.open([folder])
    assert session.warm_up_tags(Caller()) >= len(SENTENCES)
    assert tag_store.path_for(cache_root()).is_file()
    assert session.warm_up_tags(Caller()) == 0  # everything is stored now


def test_cache_clear_removes_the_tags(tmp_path: Path) -> None:
    from core.store.contents import clear_cache

    root = tmp_path / "cache"
    root.mkdir(mode=0o700)
    tag_store.warm(root, SENTENCES, tag_text)
    assert clear_cache(root).freed > 0
    assert not (root / tag_store.FOLDER).exists()
