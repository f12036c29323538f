"""A yes/no answer given by the evidence itself ("Can I …? No. …"): the verdict is the text's own,
and the answer never gives itself as its reason ("No, because: No." explains nothing)."""

from __future__ import annotations

import pytest

from core.kernel.session import Session
from core.text.sentences import period_continues
from tests.support.text_kb import ask, open_texts

# A harbour master's notice, written for these tests.
NOTICE = """Marina Notice for Visiting Boats

May visitors moor on the fuel pontoon overnight? No. The pontoon must stay clear for the lifeboat, which refuels there at any hour.

Is shore power included in the berth fee? Yes, every berth fee includes shore power up to sixteen amps.

Can visitors use the crane without booking? No.

The harbour office sells ice and charts.
"""

FAQ_UNIT = """## Context Unit club-faq::chunk-000::unit-000
SourceId: club-faq
ChunkId: club-faq::chunk-000
Role: Constraint
Title: Guests
Topic: Can members bring guests to the darkroom?
Claim: No. The darkroom holds four people and its chemicals need a trained user.
UtilityActs: verify
"""


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Session:
    return open_texts(tmp_path_factory, "marina", {"notice.txt": NOTICE, "club.md": FAQ_UNIT})


def reason(text: str) -> str:
    return text.split("because:", 1)[1].strip()


def test_a_bare_no_is_the_answer_and_the_sentences_after_it_the_reason(session: Session) -> None:
    reply = ask(session, "May visitors moor on the fuel pontoon overnight?")
    assert reply.answer.startswith("No, because:")
    assert reason(reply.answer).startswith("The pontoon must stay clear for the lifeboat")


def test_a_yes_opening_its_sentence_is_not_repeated_as_the_reason(session: Session) -> None:
    reply = ask(session, "Is shore power included in the berth fee?")
    assert reply.answer.startswith("Yes, because:")
    assert reason(reply.answer).startswith("every berth fee includes shore power")


def test_an_faq_entry_whose_topic_is_the_question_answers_no(session: Session) -> None:
    reply = ask(session, "Can members bring guests to the darkroom?")
    assert reply.answer.startswith("No, because:")
    assert not reason(reply.answer).lower().startswith("no")
    assert "four people" in reply.answer


def test_a_bare_no_with_nothing_after_it_quotes_the_exchange(session: Session) -> None:
    reply = ask(session, "Can visitors use the crane without booking?")
    assert reply.answer.startswith("No, because:")
    assert reason(reply.answer).startswith("Can visitors use the crane without booking? No")


def test_a_reply_to_another_question_is_not_taken_for_this_one(session: Session) -> None:
    # "Yes" answers the shore power question, not one about ice.
    reply = ask(session, "Is ice included in the fee?")
    assert not reply.answer.startswith("Yes")


@pytest.mark.parametrize(
    ("text", "continues"),
    [("See No. 5 on the list.", True), ("May I park? No. The bay is reserved.", False), ("Items nos. 3 and 4.", True)],
)
def test_no_with_a_period_is_an_abbreviation_only_before_a_number(text: str, continues: bool) -> None:
    period = text.lower().index("no") + text.lower()[text.lower().index("no") :].index(".")
    following = text[period + 1 :].strip()[:1]
    assert period_continues(text, period, following) is continues
