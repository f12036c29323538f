"""Copular questions ("What is the X of Y?") answered by the value across the sentence's "is"
(core/answer/copula.py), over a small KB written for these tests: a lighthouse keeper's notes."""

from __future__ import annotations

import pytest
from test_short_answer import lead

from core.answer.copula import asks_by_copula, copula_side
from core.kernel.session import Session
from core.nlp.tagging import tag_text
from tests.support.text_kb import open_texts

NOTES = """Keeper's notes

The night signal code of the Orrin lighthouse is 2290.

Pellworth is the oldest lighthouse of the bay, built of grey granite.
"""


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Session:
    return open_texts(tmp_path_factory, "keeper", {"notes.txt": NOTES})


def test_the_value_after_the_copula_answers_not_a_modifier_of_the_asked_noun(session: Session) -> None:
    # "night" is a kind of signal code; asked what the code is, the answer is what it "is".
    assert lead(session, "What is the signal code of the lighthouse?") == "2290"


def test_the_value_before_the_copula_answers_too(session: Session) -> None:
    assert lead(session, "What is the oldest lighthouse of the bay?") == "Pellworth"


def test_a_question_with_a_verb_of_its_own_is_not_copular() -> None:
    assert asks_by_copula(tag_text("What is the signal code of the lighthouse?"))
    assert not asks_by_copula(tag_text("What is the jar sealed with?"))
    assert not asks_by_copula(tag_text("Who built the lighthouse?"))


def test_sides_of_the_copula() -> None:
    tokens = tag_text("The night signal code of the Orrin lighthouse is 2290.")
    words = [t.word for t in tokens]
    night, value = words.index("night"), words.index("2290")
    assert copula_side(tokens, night, night, "code") is False
    assert copula_side(tokens, value, value, "code") is True
    # A sentence without a copula has no side to tell.
    plain = tag_text("The keeper lit the lamp at dusk.")
    assert copula_side(plain, 1, 1, "code") is None
