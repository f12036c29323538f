"""The install's shared Porter stems (core/store/shared_stems.py): a build learns what earlier
builds stored and stems only new words, with nltk's stems; damaged, foreign or excess files are
skipped or merged, never trusted."""

from __future__ import annotations

from pathlib import Path

import pytest

import core.store.shared_stems as shared
import core.text.tokenizer as text
from core.nlp import unpacked

WORDS = "quillworts flowering estuaries brooding harbours swarming".split()


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """A new process's state, with the install folder under `tmp_path`; `restart()` forgets
    this process's stems as a new worker would start without them."""
    monkeypatch.setattr(shared, "INSTALL_FOLDER", tmp_path / "unpacked")

    def restart() -> None:
        monkeypatch.setattr(shared, "_FOLDER", [])
        monkeypatch.setattr(shared, "_read", set())
        monkeypatch.setattr(shared, "_words_read", 0)
        monkeypatch.setattr(shared, "_published", 0)
        monkeypatch.setattr(text, "_STEM_SOURCES", {})
        monkeypatch.setattr(text, "_KNOWN_STEMS", {})
        monkeypatch.setattr(text, "_COMPUTED_STEMS", {})
        text.stem.cache_clear()

    restart()
    yield restart
    text.stem.cache_clear()


def _stems_files(root: Path) -> list[Path]:
    return sorted(root.glob(f"porter-stems-*/*{shared.SUFFIX}"))


def test_the_install_folder_is_the_nlp_data_folder() -> None:
    assert shared.INSTALL_FOLDER == unpacked.INSTALL_ROOT


def test_a_later_build_learns_the_stored_stems_and_stems_only_new_words(fresh, tmp_path) -> None:
    nltk = {word: text._stemmer().stem(word) for word in [*WORDS, "tidal"]}
    shared.learn_shared()
    assert [text.stem(word) for word in WORDS] == [nltk[word] for word in WORDS]
    shared.publish_computed()
    assert len(_stems_files(tmp_path / "unpacked")) == 1
    shared.publish_computed()  # nothing new computed: nothing written
    assert len(_stems_files(tmp_path / "unpacked")) == 1

    fresh()
    shared.learn_shared()
    assert [text.stem(word) for word in [*WORDS, "tidal"]] == [nltk[word] for word in [*WORDS, "tidal"]]
    assert text.computed_stems() == {"tidal": nltk["tidal"]}


def test_a_damaged_or_foreign_file_is_not_learned(fresh, tmp_path) -> None:
    shared.learn_shared()
    for word in WORDS:
        text.stem(word)
    shared.publish_computed()
    [stored] = _stems_files(tmp_path / "unpacked")
    header, body = stored.read_bytes().split(b"\n", 1)
    stored.write_bytes(header + b"\n" + body.replace(b"flower", b"flowex"))
    (stored.parent / f"other{shared.SUFFIX}").write_bytes(b'{"format": "mrptui-stems/0"}\n{"brooding": "x"}')

    fresh()
    shared.learn_shared()
    assert text.stem("flowering") == "flower" and text.stem("brooding") == text._stemmer().stem("brooding")
    assert set(text.computed_stems()) == {"flowering", "brooding"}


def test_files_past_the_bound_are_merged_into_one(fresh, monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(shared, "MAX_FILES", 3)
    for word in WORDS:
        text.stem(word)
        shared.publish_computed()
    kept = len(_stems_files(tmp_path / "unpacked"))
    assert kept >= 1 and kept <= shared.MAX_FILES

    fresh()
    shared.learn_shared()
    for word in WORDS:
        text.stem(word)
    assert text.computed_stems() == {}


def test_a_full_table_takes_no_more_stems(fresh, monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(shared, "MAX_FILES", 2)
    monkeypatch.setattr(shared, "MAX_WORDS", 3)
    for word in WORDS:
        text.stem(word)
        shared.publish_computed()
    fresh()
    shared.learn_shared()
    for word in WORDS:
        text.stem(word)
    assert 0 < len(text.computed_stems()) < len(WORDS)  # the first words were stored, not the rest


def test_another_nltk_gets_a_new_folder_and_the_old_one_goes(fresh, monkeypatch, tmp_path) -> None:
    text.stem("flowering")
    shared.publish_computed()
    [old] = _stems_files(tmp_path / "unpacked")

    fresh()
    monkeypatch.setattr(shared, "_nltk_key", lambda: "original_algorithm-9.9-1")
    shared.learn_shared()
    text.stem("flowering")
    assert text.computed_stems() == {"flowering": "flower"}
    assert not old.parent.exists()


def test_an_unusable_folder_only_means_stemming_again(fresh, monkeypatch, tmp_path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setattr(shared, "INSTALL_FOLDER", blocked)
    shared.learn_shared()
    assert text.stem("flowering") == "flower"
    shared.publish_computed()
    assert blocked.read_text() == "not a folder"


def test_forgetting_removes_every_stored_table_and_nothing_else_of_the_install(fresh, tmp_path) -> None:
    shared.learn_shared()
    [text.stem(word) for word in WORDS]
    shared.publish_computed()
    root = tmp_path / "unpacked"
    (root / "tagger.bin").write_bytes(b"unpacked NLP data")
    sizes = [path.stat().st_size for path in _stems_files(root)]
    assert sizes
    result = shared.forget_shared()
    assert result.failures == [] and result.freed == sum(sizes)
    assert _stems_files(root) == [] and not list(root.glob("porter-stems-*"))
    assert (root / "tagger.bin").read_bytes() == b"unpacked NLP data"
