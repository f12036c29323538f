"""Questions asked of the reader: the request or the question inside them is what is asked."""

from __future__ import annotations

import pytest

from core.kernel.contract import Request
from core.kernel.events import AnswerReady
from core.question.indirect import inner_question
from core.question.intent_cues import split_input
from core.units import Caller
from tests.support.text_kb import open_texts


@pytest.mark.parametrize(
    ("asked", "inner"),
    [
        ("Can you name two services?", "Name two services."),
        ("Could you please list the depots?", "List the depots."),
        ("Could you tell me what Orionctl uses?", "What Orionctl uses?"),
        ("Do you know where the keys are kept?", "Where the keys are kept?"),
        ("Would you say who repaired the gate?", "Who repaired the gate?"),
    ],
)
def test_a_question_to_the_reader_asks_its_inner_request_or_question(asked, inner):
    assert inner_question(asked) == inner
    assert split_input(asked) == ([], [inner])


@pytest.mark.parametrize(
    "asked",
    [
        "Can you park on the street?",  # "you" as anyone: a yes/no question about the rules
        "Do you need a permit?",
        "Does Orionctl use Atlas?",
        "Can they name two services?",
        "Can you tell?",
        "What can you name?",
    ],
)
def test_other_questions_keep_their_reading(asked):
    assert inner_question(asked) is None


DEPOT = """The depot lathe reprofiles tram wheels. Sara Okoye runs the night shift at Kelvin depot.
"""


def test_the_inner_question_is_answered_not_a_yes(tmp_path_factory: pytest.TempPathFactory) -> None:
    # Asked as written it was a yes/no question about "you", and "Sara Okoye runs the night
    # shift" answered "Yes".
    session = open_texts(tmp_path_factory, "depot", {"depot.txt": DEPOT})
    events = list(session.run(Request(question="Could you tell me who runs the night shift?", caller=Caller())))
    answer = next(e for e in reversed(events) if isinstance(e, AnswerReady))
    assert answer.status == "grounded", answer.answer
    assert answer.answer.startswith("Sara Okoye")
