"""A lead that is one item of a list of noun phrases answers with the whole list, unless the
question names another item of it (core/answer/lead_spans.py, `listed`)."""

from __future__ import annotations

import pytest

from core.answer.lead_spans import listed
from core.kernel.session import Session
from core.nlp.tagging import tag_text
from core.question.answer_types import AnswerType, Expected
from core.question.typed_spans import Span
from tests.support.text_kb import lead, open_texts

STATION = """The Skerry Light Station

When fog rolls in, the keeper records the time, the visibility and the hours the fog signal ran in the station log.

The boathouse stores oars, lifejackets and two boat hooks.

The relief boat calls every second Thursday.
"""

THING = Expected(AnswerType.THING)


@pytest.fixture(scope="module")
def station(tmp_path_factory: pytest.TempPathFactory) -> Session:
    return open_texts(tmp_path_factory, "station", {"station.txt": STATION})


def test_a_listed_lead_answers_with_every_item(station: Session) -> None:
    assert lead(station, "What does the keeper record when fog rolls in?") == "the time, the visibility and the hours"
    assert lead(station, "What does the boathouse store?") == "oars, lifejackets and two boat hooks"


def test_a_question_naming_one_item_gets_another_not_the_list(station: Session) -> None:
    answer = lead(station, "Apart from oars, what does the boathouse store?")
    assert "oars" not in answer and "," not in answer and answer


def _grown(sentence: str, word: str) -> str:
    tokens = tag_text(sentence)
    at = next(i for i, t in enumerate(tokens) if t.word == word)
    return listed(Span(word, at, at), tokens, sentence, frozenset(), THING).text


def test_a_fronted_phrase_and_an_apposition_are_no_items() -> None:
    assert _grown("In the evening, the keeper and the assistant clean the lamp.", "keeper") == (
        "the keeper and the assistant"
    )
    assert _grown("The keeper, a former sailor, lights the lamp.", "keeper") == "keeper"


def test_a_list_ends_at_its_last_item_and_two_items_take_no_comma() -> None:
    # "A, and B" joins clauses: a serial comma needs a third item.
    sentence = "The first British empire was based on mercantilism, and involved colonies and holdings."
    assert _grown(sentence, "mercantilism") == "mercantilism"
    sentence = "Forms such as painting, poetry, and calligraphy, the Song dynasty and the Yuan dynasty flourished."
    assert _grown(sentence, "poetry") == "painting, poetry, and calligraphy"
    assert _grown("Heat and pressure and time change the rock.", "pressure") == "Heat and pressure and time"


def test_only_a_noun_phrase_type_grows() -> None:
    sentence = "The boathouse stores oars, lifejackets and two boat hooks."
    tokens = tag_text(sentence)
    at = next(i for i, t in enumerate(tokens) if t.word == "lifejackets")
    reason = Expected(AnswerType.REASON)
    assert listed(Span("lifejackets", at, at), tokens, sentence, frozenset(), reason).text == "lifejackets"
