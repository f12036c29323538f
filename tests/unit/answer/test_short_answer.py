"""The typed lead gs-symbolic picks from a sentence (core/answer/short_answer.py), end to end over
a small KB written for these tests: a harbour ferry's log."""

from __future__ import annotations

import pytest

from core.answer.answer_forms import Draft
from core.answer.quote_check import checked
from core.kernel.session import Session
from core.nlp import tagging
from core.question import Question
from tests.support.text_kb import ask, lead, open_texts

FERRY = """The Harbour Ferry Log

During the cold winter, ice-sheets covered the deck of the old ferry.

The ferry's spare propeller is bolted to the engine room wall, beside the tool chest.

In 1931 Marta Quill built the Larkspur for the Tollan Brisk Line.

In 1952 the ferry was laid up at Fort Caddow.

In 1953 the ferry sailed up the river Tarne to the breakers' yard.

In 1950 the Tollan and Brisk Line joined the Coastal Mail consortium, a year after the Harbour Board refused its licence.

The mail charter of the Coastal Mail consortium is enforced by the Coastal Court of Appeal.
"""


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Session:
    return open_texts(tmp_path_factory, "ferry", {"ferry.txt": FERRY})


def test_a_lead_is_whole_written_words(session: Session) -> None:
    # The tokenizer splits "ice-sheets"; a lead of "sheets" would stop inside a word.
    assert lead(session, "What covered the deck of the old ferry during the cold winter?") == "ice-sheets"


def test_a_lead_stands_in_the_question_gap(session: Session) -> None:
    # Asked "bolted to?", the answer is what follows "bolted to", not the nearest other noun.
    assert lead(session, "What is the spare propeller of the ferry bolted to?") == "engine room wall"


def test_a_name_sharing_only_a_modifier_with_the_question_is_another_entity(session: Session) -> None:
    # "Coastal" is all the court's name shares with "the Coastal Mail consortium": it is no part
    # of the question's own name, and the agent of the passive answers "What body enforces …?".
    assert lead(session, "What body enforces the mail charter of the Coastal Mail consortium?") == "Court of Appeal"


def test_a_part_of_the_question_own_name_is_no_lead(session: Session) -> None:
    # "Marta" is part of "Marta Quill", whom the question names; the line is the other name.
    assert lead(session, "For what line did Marta Quill build the Larkspur in 1931?") == "Tollan Brisk"


def test_asked_which_x_the_phrase_naming_an_x_leads(session: Session) -> None:
    assert lead(session, "What consortium did the Tollan and Brisk Line join in 1950?") == "Coastal Mail"


def test_the_asked_class_noun_stays_when_the_name_writes_it(session: Session) -> None:
    # "what fort": "Fort" is part of the name asked for; "which river": "river" is only a
    # common noun before the name, and goes.
    assert lead(session, "At what fort was the ferry laid up in 1952?") == "Fort Caddow"
    assert lead(session, "Which river did the ferry sail up in 1953?") == "Tarne"


SLIPWAY = """The Slipway Notes

The Kessel boatyard repairs the four Albatross 20 dinghies that the sailing school hires out.

Moorings are checked by the harbour master every first Friday at 07:15.

A mooring buoy costs £95 and is replaced when it is cracked.

The salting bins by the slipway are filled with coarse rock salt before the first frost.
"""


@pytest.fixture(scope="module")
def slipway(tmp_path_factory: pytest.TempPathFactory) -> Session:
    return open_texts(tmp_path_factory, "slipway", {"slipway.txt": SLIPWAY})


def test_a_noun_phrase_lead_keeps_its_head_noun(slipway: Session) -> None:
    # "Albatross 20" is a name with a number modifying "dinghies", which the lead must keep.
    assert lead(slipway, "What does the Kessel boatyard repair?").endswith("Albatross 20 dinghies")


def test_a_stranded_passive_preposition_asks_for_its_object(slipway: Session) -> None:
    # Not a kind of bin; and "salt" is not the question's own word though "salting" shares its stem.
    assert lead(slipway, "What is the salting bin filled with?") == "coarse rock salt"


def test_a_recurring_day_is_no_antecedent_of_it(slipway: Session) -> None:
    detail = ask(slipway, "How much does a mooring buoy cost?").parts[0].detail
    assert detail.lead == "£95"
    assert not any("Friday" in r for r in detail.resolved)


def test_a_quoted_draft_whose_words_say_the_question_is_checked_untagged(monkeypatch) -> None:
    # `checked` reads the quote's tags only for a term its words leave unsaid (support.said_by).
    read = []
    monkeypatch.setattr(tagging, "recall", lambda text: read.append(text))  # asked on each tagging
    question = Question("Why was the Larkspur laid up at Fort Caddow?")
    quote = "In 1952 the Larkspur was laid up at Fort Caddow because its boiler had cracked."
    draft = checked(question, question.expected, Draft(quote, ("ferry",), "quoted evidence"))
    assert draft.detail is not None and draft.detail.supported and quote not in read


def test_a_sentence_past_the_word_budget_is_not_read_and_the_answer_names_the_budget(tmp_path_factory) -> None:
    # A paste that lost its full stops: one "sentence" of 1,200 words, the answer in it.
    filler = " ".join(f"the crew painted hull number {n} on a calm day" for n in range(120))
    text = f"In 1931 Marta Quill built the Larkspur for the Tollan Brisk Line and {filler}\n"
    session = open_texts(tmp_path_factory, "pasted", {"pasted.txt": text})
    answer = ask(session, "Who built the Larkspur?").answer
    assert "1 kept sentence over the sentence budget (1,000 words read, at most" in answer
