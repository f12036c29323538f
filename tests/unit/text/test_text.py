from __future__ import annotations

import pytest

from core.text.tokenizer import STOPWORDS, tokenize


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("uses", "us"),
        ("ties", "ti"),
        ("lying", "ly"),
        ("execution", "execut"),
        ("relevant", "relev"),
        ("replacement", "replac"),
    ],
)
def test_original_porter_vectors(word: str, stem: str) -> None:
    assert tokenize(word) == [stem]


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("X-ray", ["x-rai", "x", "rai"]),
        ("Orion's", ["orion"]),
        ("(RPL-14),", ["rpl-14", "rpl", "14"]),
        ("3-day-old", ["3-day-old"]),
        ("the a-b", ["a-b", "b"]),
        ('"quoted," -- ...', ["quot"]),
        ("snake_case!", ["snake_cas"]),
        ("Data data DATA", ["data", "data", "data"]),
        ("", []),
    ],
)
def test_pipeline_table(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


def test_ships_the_115_stopwords() -> None:
    assert len(STOPWORDS) == 115
    assert tokenize(" ".join(sorted(STOPWORDS))) == []


def test_stem_tables_are_read_within_the_budget_and_give_the_stemmers_stems(monkeypatch) -> None:
    import core.text.tokenizer as text
    from core.store.segment import SegmentStems

    words = ["quillworts", "flowering", "estuaries", "brooding", "harbours", "swarming"]
    # Each table is one stored segment's (JSON bytes), holding one word's stem.
    tables = [SegmentStems(SegmentStems.of({word: text._stemmer().stem(word)}).dump()) for word in words]
    monkeypatch.setattr(text, "_STEM_SOURCES", {})
    monkeypatch.setattr(text, "_KNOWN_STEMS", {})
    monkeypatch.setattr(text, "_COMPUTED_STEMS", {})
    monkeypatch.setattr(text, "_source_bytes_read", 0)
    monkeypatch.setattr(text, "STEM_SOURCE_BUDGET", sum(table.size() for table in tables[:2]))
    for number, table in enumerate(tables):
        text.add_stem_source(f"segment-{number}", table)
    text.stem.cache_clear()
    try:
        # A word no table holds reads only as many tables as the budget allows, then nltk stems it.
        assert text.stem("tidal") == "tidal" and "tidal" in text._COMPUTED_STEMS
        assert [table.is_read() for table in tables] == [True, True, False, False, False, False]
        # A word of a table already read comes from it; one of an unread table, from nltk, the same stem.
        assert text.stem("flowering") == "flower" and "flowering" not in text._COMPUTED_STEMS
        assert text.stem("swarming") == text._stemmer().stem("swarming") and "swarming" in text._COMPUTED_STEMS
        assert not any(table.is_read() for table in tables[2:])
    finally:
        text.stem.cache_clear()
