"""Answers over a library notice written for these tests (issue 24, text nobody tuned the rules
on): numbers written in words, places that are no names, the sentence a weak answer quotes,
yes/no questions that need every term, and a place noun that is no person's."""

from __future__ import annotations

import pytest

from core.kernel.session import Session
from tests.support.text_kb import ask, open_texts

NOTICE = """Harbourside Public Library: notice to members

Opening hours. The library opens at nine in the morning and closes at six in the evening, Monday to Saturday. The library is closed on Sundays and public holidays.

History. The library was founded in 1908 by Agnes Pryor, a schoolteacher who left her savings to the town.

Borrowing. Members may borrow up to eight books for three weeks. Late returns cost twenty pence a day for each book.

Collections. The map collection is kept in the reading room on the first floor.

Membership. Membership is free for residents. Visitors may join for a fee of ten pounds a year.
"""


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Session:
    return open_texts(tmp_path_factory, "library", {"library.txt": NOTICE})


def test_a_number_written_in_words_answers_how_many_and_counts_what_was_asked(session: Session) -> None:
    # "eight" was tagged ADJ, so "three" (of "three weeks") answered; "twenty" NOUN, so no number.
    books = ask(session, "How many books may members borrow?")
    assert (books.status, books.parts[0].detail.lead) == ("grounded", "eight")
    cost = ask(session, "How much do late returns cost?")
    assert (cost.status, cost.parts[0].detail.lead) == ("grounded", "twenty pence")


def test_a_place_may_be_a_common_noun_after_a_locative_preposition(session: Session) -> None:
    kept = ask(session, "Where is the map collection kept?")
    assert (kept.status, kept.parts[0].detail.lead) == ("grounded", "reading room")


def test_a_day_and_the_agent_of_a_passive_are_no_places(session: Session) -> None:
    # "Monday" and "Agnes Pryor" were offered as where the library is.
    where = ask(session, "Where is the library?")
    assert where.status == "weak"
    assert "Monday" not in where.parts[0].detail.lead and "Pryor" not in where.parts[0].detail.lead


def test_the_town_is_not_the_person_named_before_it(session: Session) -> None:
    founded = ask(session, "Who founded the library?")
    assert (founded.status, founded.parts[0].detail.lead) == ("grounded", "Agnes Pryor")
    assert not any("town" in r for r in founded.parts[0].detail.resolved)


def test_a_weak_answer_quotes_the_sentence_closest_to_the_question_not_a_heading(session: Session) -> None:
    # Every candidate says one term as written; the heading "Membership." said nothing about cost.
    weak = ask(session, "How much does membership cost for visitors?")
    assert weak.status == "weak"
    assert "Visitors may join for a fee of ten pounds a year" in weak.answer


@pytest.mark.parametrize(
    ("question", "verdict"),
    [
        ("Is the library open on Sundays? Answer Yes or No.", "No"),  # "closed on Sundays"
        ("Can members borrow eight books? Answer Yes or No.", "Yes"),
        # A number is said by the stating sentence: "nine in the morning" says nothing of books.
        ("Can members borrow nine books? Answer Yes or No.", "No"),
    ],
)
def test_yes_no_over_the_notice(session: Session, question: str, verdict: str) -> None:
    reply = ask(session, question)
    assert reply.status == "grounded" and reply.answer.startswith(f"{verdict}, because"), reply.answer
