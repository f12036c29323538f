"""Resolved references answer questions end to end: a "who" question whose sentence says "He" or
"Their daughter" is answered with the name the text gives, and "it" never answers "who". Texts
written for these tests: a post-mortem, a family letter, a notice."""

from __future__ import annotations


import pytest

from core.session import Session
from test_answer_forms import ask
from text_kb import open_texts

POST_MORTEM = """Pump Room Post-mortem

Olu Bakare joined the night shift in May. He cleared the blocked strainer on Tuesday, and the pressure recovered within an hour.
"""

LETTER = """Letter from Aunt Greta

Priya and Tomasz Novak moved to Ashby last spring with their daughter, Lena. Their daughter starts at the village school in September.
"""

NOTICE = """Allotment Notice

Q: Who do I contact about a broken gate?
A: Report it to the site warden, Gerald Pike, who keeps the spare keys.
"""


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Session:
    return open_texts(tmp_path_factory, "stories", {"pm.txt": POST_MORTEM, "letter.txt": LETTER, "notice.txt": NOTICE})



def test_he_answers_who_as_the_person_named_before(session: Session) -> None:
    answer = ask(session, "Who cleared the blocked strainer?")
    assert answer.status == "grounded" and answer.answer.startswith("Olu Bakare, because:")
    assert answer.parts[0].detail.resolved == ("He \u2192 Olu Bakare",)


def test_their_daughter_answers_who_as_her_name(session: Session) -> None:
    answer = ask(session, "Who starts at the village school in September?")
    assert answer.status == "grounded" and answer.answer.startswith("Lena, because:")


def test_it_never_answers_who(session: Session) -> None:
    answer = ask(session, "Who should I tell about a broken gate?")
    assert answer.answer.startswith("Gerald Pike")
