"""The batch tokeniser of segment builds equals `tokenize` text by text (tokens, vocabulary ids in
order of first use, stem table), on bell-founding notes written for this test."""

from __future__ import annotations

import gc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.cnl import source as source_module
from core.store import raw_numbers
from core.store.segment import Segment
from core.store.terms import tokenise_texts
from core.text.tokenizer import stem, stem_table, tokenize

FOUNDRY = [
    "The bell-founder's loam mould is swept with a strickle board; the crown staples go in last.",
    "",
    "Tin-bronze (78% copper, 22% tin) rings longest -- more tin cracks, less tin sounds dull...",
    "Ωmega ΣΑΣ naïve café Glockengießerei straße — ÉTÉ",
    "  leading   and\ttrailing\u00a0whitespace\u2003splits   ",
    "it's the founders' bells' tuning: strike-note, hum-note, tierce, quint, nominal",
    "the and of a an",  # stopwords only
    "--- ... !!! ''",  # nothing with a letter or digit
    "3-day-old x-ray RPL-14 co-operate re-cast re-cast re-cast",
    "canon-bell " * 400,  # a very long line
    "Explanation",
    "explain describe",
]


def reference(texts: list[str], vocab: dict[str, int]) -> tuple[list[int], list[int]]:
    """What the segment build did before: `tokenize` each text, one setdefault per token."""
    counts, terms = [], []
    for text in texts:
        tokens = tokenize(text)
        counts.append(len(tokens))
        terms.extend(vocab.setdefault(token, len(vocab)) for token in tokens)
    return counts, terms


def check(texts: list[str], start: dict[str, int] | None = None) -> None:
    vocab, expected_vocab = dict(start or {}), dict(start or {})
    batch = tokenise_texts(texts, vocab)
    assert (batch.counts.tolist(), batch.terms.tolist()) == reference(texts, expected_vocab)
    assert list(vocab) == list(expected_vocab) and vocab == expected_vocab
    # The stem table: words of the texts, each with its stem, covering every token emitted.
    lowered = " ".join(texts).lower()
    assert all(word in lowered and stem(word) == value for word, value in batch.stems.items())
    assert set(batch.stems.values()) == {token for text in texts for token in tokenize(text)}


def test_foundry_notes_tokenise_as_tokenize_does() -> None:
    check(FOUNDRY)


def test_a_vocabulary_from_an_earlier_build_keeps_its_ids_and_grows_in_first_use_order() -> None:
    earlier = {"tierc": 0, "unused": 1, "bell": 2}
    check(FOUNDRY, earlier)


def test_no_texts_and_only_empty_texts() -> None:
    assert tokenise_texts([], {}).counts.tolist() == []
    batch = tokenise_texts(["", "   ", "the"], {})
    assert batch.counts.tolist() == [0, 0, 0] and batch.terms.tolist() == [] and batch.stems == {}


_ALPHABET = st.sampled_from(list("abcxyzΣσςé-'_.,;!?3 \t\u00a0") + ["the", "bell's", "re-", "X-Ray", "ÉTÉ"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(_ALPHABET, max_size=30).map("".join), max_size=8))
def test_any_text_tokenises_as_tokenize_does(texts: list[str]) -> None:
    check(texts)


def test_an_edit_that_changes_no_unit_text_reuses_every_units_tokens(tmp_path) -> None:
    path = tmp_path / "foundry.md"
    path.write_text(
        "## Context Unit foundry::chunk-001::unit-001\nRole: Explanation\nTopic: Crown staples\n"
        "Claim: The crown staples hold the clapper.\n",
        encoding="utf-8",
    )
    first = Segment.build(path, "k")
    path.write_text("\n\n" + path.read_text(encoding="utf-8"), encoding="utf-8")  # only locations move
    again = Segment.build(path, "k", earlier=first)
    assert again.terms.tolist() == first.terms.tolist() and list(again.words) == list(first.words)
    assert again.lengths.tolist() == first.lengths.tolist() and again.units[0].location.line == 3


def test_a_build_pauses_the_collector_and_restores_it_as_it_was(tmp_path, monkeypatch) -> None:
    path = tmp_path / "foundry.md"
    path.write_text("## Context Unit foundry::chunk-001::unit-001\nRole: Explanation\nTopic: Tenor\nClaim: Rings.\n")
    seen = []
    original = source_module.read_pieces  # the segment imports its reader when it reads a file
    monkeypatch.setattr(source_module, "read_pieces", lambda file: seen.append(gc.isenabled()) or original(file))
    Segment.build(path, "k")
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:
        Segment.build(path, "k")
        assert not gc.isenabled()  # a caller that turned it off keeps it off
    finally:
        gc.enable()
    monkeypatch.setattr(source_module, "read_pieces", lambda file: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        Segment.build(path, "k")
    assert gc.isenabled()


def test_the_reload_paths_stem_table_equals_the_batchs() -> None:
    assert stem_table(FOUNDRY) == tokenise_texts(FOUNDRY, {}).stems


# ASCII text, numbered by hashing its bytes: every character `str.split` splits on among them.
_ASCII = st.sampled_from(list("abcxyzAZ3-'_.,;!? \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x00\x7f") + ["the", "bell's", "X-Ray"])
_ASCII_FOUNDRY = [text for text in FOUNDRY if text.isascii()]


def _same_numbers(found: raw_numbers.RawNumbers | None, texts: list[str]) -> None:
    expected = raw_numbers._by_dict(texts)
    assert found is not None
    assert found.raws == expected.raws
    assert found.ids.tolist() == expected.ids.tolist() and found.counts.tolist() == expected.counts.tolist()


def _hashed(texts: list[str]) -> raw_numbers.RawNumbers | None:
    return raw_numbers._by_hash(" ".join(texts).lower(), texts)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(_ASCII, max_size=30).map("".join), max_size=8))
def test_ascii_texts_hashed_are_numbered_as_split_and_a_dict_number_them(texts: list[str]) -> None:
    _same_numbers(_hashed(texts), texts)
    check(texts)


def test_every_ascii_character_between_two_letters_splits_them_as_str_split_does() -> None:
    texts = [f"a{chr(code)}b" for code in range(128)]
    _same_numbers(_hashed(texts), texts)


def test_tokens_of_every_length_around_the_short_keys_limit_are_told_apart() -> None:
    # Equal first 8 or 16 bytes, different ends; long tokens repeated; a long token last of all.
    stems = ["a" * size for size in (1, 7, 8, 9, 15, 16, 17, 40)]
    texts = [" ".join(stems), " ".join(stem + "b" for stem in stems), " ".join(reversed(stems)), "x" * 33]
    _same_numbers(_hashed(texts), texts)
    _same_numbers(_hashed(_ASCII_FOUNDRY), _ASCII_FOUNDRY)
    check(texts)


def test_a_hash_collision_is_caught_and_the_texts_are_numbered_by_the_dict(monkeypatch) -> None:
    monkeypatch.setattr(raw_numbers, "_mixed", lambda lengths, first, second: lengths.copy())
    assert _hashed(["bell toll", "hum"]) is None  # "bell" and "toll" differ in bytes, not in length
    assert _hashed(["bell bell", "hum"]) is not None
    _same_numbers(raw_numbers.number_raw_tokens(["bell toll", "hum"]), ["bell toll", "hum"])
    check(_ASCII_FOUNDRY)
