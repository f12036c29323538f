from __future__ import annotations

import pytest

from core.text import STOPWORDS, tokenize


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
