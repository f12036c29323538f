"""core/nlp/unpacked.py: the shipped NLP data unpacked once per install (or, where the install
cannot be written, once per cache), read back only when the store wrote it for the same source."""

from __future__ import annotations

import gzip
import json
import marshal
import stat
from pathlib import Path

import pytest

from core.nlp import lexicon, tagger, unpacked
from core.nlp.unpacked import FOLDER, KEEP_PER_SOURCE, load_unpacked
from core.store.contents import clear_cache
from core.store.location import CACHE_DIR_ENV, NO_CACHE_ENV
from core.store.private import Mac


@pytest.fixture
def cache(tmp_path: Path, monkeypatch) -> Path:
    """The index cache, with an install that cannot be written (the shipped data goes to the cache)."""
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(NO_CACHE_ENV, raising=False)
    monkeypatch.setattr(unpacked, "INSTALL_ROOT", None)
    return tmp_path / "cache"


@pytest.fixture
def install(tmp_path: Path, cache: Path, monkeypatch) -> Path:
    """An install whose shipped data folder is `tmp_path` and can be written."""
    monkeypatch.setattr(unpacked, "SHIPPED", tmp_path)
    monkeypatch.setattr(unpacked, "INSTALL_ROOT", tmp_path / "unpacked")
    return tmp_path / "unpacked"


def _source(tmp_path: Path, value: dict) -> Path:
    path = tmp_path / "data.json.gz"
    path.write_bytes(gzip.compress(json.dumps(value).encode()))
    return path


def _load(source: Path, calls: list) -> dict:
    def unpack(raw: bytes) -> dict:
        calls.append(1)
        return json.loads(gzip.decompress(raw))

    return load_unpacked(source, unpack, marshal.dumps, marshal.loads)


def test_the_second_load_reads_what_the_first_stored(tmp_path: Path, cache: Path) -> None:
    source, calls = _source(tmp_path, {"w": {"a": 1.5}}), []
    assert _load(source, calls) == {"w": {"a": 1.5}} and len(calls) == 1
    assert _load(source, calls) == {"w": {"a": 1.5}} and len(calls) == 1
    (stored,) = (cache / FOLDER).iterdir()
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert stat.S_IMODE((cache / FOLDER).stat().st_mode) == 0o700


def test_a_stored_file_the_store_did_not_write_is_not_used(tmp_path: Path, cache: Path) -> None:
    source, calls = _source(tmp_path, {"w": 1}), []
    _load(source, calls)
    (stored,) = (cache / FOLDER).iterdir()
    header, body = stored.read_bytes().split(b"\n", 1)
    stored.write_bytes(header + b"\n" + marshal.dumps({"w": 2}))  # same header, other body
    assert _load(source, calls) == {"w": 1} and len(calls) == 2
    assert _load(source, calls) == {"w": 1} and len(calls) == 2  # written again, whole


def test_new_source_data_gets_a_new_file_and_the_old_one_goes(tmp_path: Path, cache: Path) -> None:
    calls: list = []
    first = _source(tmp_path, {"v": 1})
    _load(first, calls)
    second = _source(tmp_path, {"v": 22})
    assert _load(second, calls) == {"v": 22} and len(calls) == 2
    assert len(list((cache / FOLDER).iterdir())) == 1


def test_without_a_cache_every_load_unpacks_and_nothing_is_written(tmp_path: Path, cache: Path, monkeypatch) -> None:
    monkeypatch.setenv(NO_CACHE_ENV, "1")
    source, calls = _source(tmp_path, {"v": 1}), []
    _load(source, calls)
    _load(source, calls)
    assert len(calls) == 2 and not cache.exists()


def test_the_tagger_reads_back_the_table_it_stored_and_clearing_the_cache_removes_it(cache: Path) -> None:
    words = ["Crews", "fixed", "the", "pumps", "at", "Lower", "Dunmore", "."]
    first = tagger.load()  # unpacked and stored
    (stored,) = (cache / FOLDER).iterdir()
    assert tagger.load().tag(words) == first.tag(words)  # read back
    assert stored.exists()
    clear_cache(cache)
    assert not (cache / FOLDER).exists()


def test_a_stored_tagger_file_of_another_format_is_made_again(cache: Path) -> None:
    tagger.load()
    (stored,) = (cache / FOLDER).iterdir()
    header = stored.read_bytes().split(b"\n", 1)[0]
    other = marshal.dumps(tagger.read_weights())  # what the store wrote before the table
    mac = Mac.of_root(cache).of_bytes(other)
    stored.write_bytes(header.replace(json.loads(header)["mac"].encode(), mac.encode()) + b"\n" + other)
    assert tagger.load().tag(["The", "dog", "barked"]) == ["DET", "NOUN", "VERB"]
    assert b"mrptui-upos-table/1" in stored.read_bytes()


def test_the_lexicon_stores_its_glosses_apart_and_reads_them_only_for_a_gloss(cache: Path) -> None:
    def stored() -> set[str]:
        return {p.name.split("-")[0] for p in (cache / FOLDER).iterdir()}

    first = lexicon.load()
    assert first.lemma("mice") == "mouse" and stored() == {"lexicon.bin.gz"}  # every array but the glosses
    reason = first.link("notebook", "laptop").via
    assert "portable computer" in reason and stored() == {"lexicon.bin.gz", "lexicon.bin.gz.glosses"}
    read_back = lexicon.load()
    assert read_back.lemma("mice") == "mouse" and read_back.link("notebook", "laptop").via == reason


def test_a_stored_lexicon_with_every_array_is_made_again_without_its_glosses(cache: Path) -> None:
    lexicon.load()
    (stored,) = (cache / FOLDER).glob("lexicon.bin.gz-*.bin")
    whole = gzip.decompress(lexicon.DATA.read_bytes())  # what the store wrote before the split
    header = json.loads(stored.read_bytes().split(b"\n", 1)[0])
    header["mac"] = Mac.of_root(cache).of_bytes(whole)
    stored.write_bytes(json.dumps(header).encode() + b"\n" + whole)
    assert lexicon.load().lemma("geese", "NOUN") == "goose"
    assert stored.stat().st_size < 0.6 * len(whole)


def test_installs_sharing_a_cache_keep_their_own_files_and_only_the_oldest_go(tmp_path: Path, cache: Path) -> None:
    # Five installs of the same data file (same name, other folders) share one cache.
    sources = []
    for n in range(KEEP_PER_SOURCE + 1):
        folder = tmp_path / f"install{n}"
        folder.mkdir()
        sources.append(_source(folder, {"n": n}))
    calls: list = []
    _load(sources[0], calls)
    _load(sources[1], calls)
    # Two installs used in turn unpack once each, not on every run.
    assert _load(sources[0], calls) == {"n": 0} and _load(sources[1], calls) == {"n": 1} and len(calls) == 2
    for source in sources[2:]:
        _load(source, calls)
    assert len(list((cache / FOLDER).iterdir())) == KEEP_PER_SOURCE
    _load(sources[-1], calls)
    assert len(calls) == len(sources)  # the newest is still stored


def test_shipped_data_is_unpacked_once_per_install_whatever_the_cache(
    tmp_path: Path, install: Path, monkeypatch
) -> None:
    source, calls = _source(tmp_path, {"w": 1}), []
    assert _load(source, calls) == {"w": 1} and len(calls) == 1
    (stored,) = (install / FOLDER).iterdir()
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "another-cache"))  # a new KB cache: read back
    assert _load(source, calls) == {"w": 1} and len(calls) == 1
    monkeypatch.setenv(NO_CACHE_ENV, "1")  # no cache at all: still read back
    assert _load(source, calls) == {"w": 1} and len(calls) == 1
    assert not (tmp_path / "cache").exists() and not (tmp_path / "another-cache").exists()


def test_other_sources_still_go_to_the_cache(tmp_path: Path, install: Path, cache: Path) -> None:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    source, calls = _source(folder, {"w": 1}), []
    _load(source, calls)
    assert _load(source, calls) == {"w": 1} and len(calls) == 1
    assert len(list((cache / FOLDER).iterdir())) == 1 and not install.exists()


def test_an_install_that_cannot_be_written_unpacks_into_the_cache(tmp_path: Path, install: Path, cache: Path) -> None:
    install.write_text("not a folder")  # as a read-only install's folder, never usable
    source, calls = _source(tmp_path, {"w": 1}), []
    _load(source, calls)
    assert _load(source, calls) == {"w": 1} and len(calls) == 1
    assert len(list((cache / FOLDER).iterdir())) == 1


def test_a_damaged_install_file_is_unpacked_again(tmp_path: Path, install: Path) -> None:
    source, calls = _source(tmp_path, {"w": 1}), []
    _load(source, calls)
    (stored,) = (install / FOLDER).iterdir()
    header = stored.read_bytes().split(b"\n", 1)[0]
    stored.write_bytes(header + b"\n" + marshal.dumps({"w": 2}))
    assert _load(source, calls) == {"w": 1} and len(calls) == 2
