"""Reference resolution (core/answer/coref.py) on small texts of several genres written for these tests:
an outage post-mortem, a family letter, a compliance notice and a field notebook."""

from __future__ import annotations

import pytest

from core.answer.coref import resolve
from core.nlp.tagging import tag_text


def resolved(sentence: str, *context: str) -> dict[str, str]:
    return {r.reference: r.antecedent for r in resolve(tag_text(sentence), sentence, list(context)).values()}


# --- an outage post-mortem ---------------------------------------------------------------------


def test_it_resolves_to_a_plain_noun_phrase() -> None:
    assert resolved("The queue filled because its consumer had stalled.") == {"its": "The queue"}


def test_it_opening_a_sentence_is_the_subject_of_the_one_before() -> None:
    # The subject of the sentence before, not its nearest noun ("the upstream cache").
    found = resolved("It recovered after the restart.", "The billing service timed out against the upstream cache.")
    assert found == {"It": "The billing service"}


def test_they_needs_several_and_it_needs_one() -> None:
    found = resolved("They were rolled back at noon.", "The new gateways rejected the token.")
    assert found == {"They": "The new gateways"}


def test_the_company_resolves_to_a_name_said_before() -> None:
    found = resolved("The company paid the refunds in March.", "Quillon Software hosted the database for the shop.")
    assert found["the company"] == "Quillon Software"


# --- a family letter -----------------------------------------------------------------------------


def test_their_daughter_links_to_the_name_the_text_gives_her() -> None:
    found = resolved(
        "Their daughter starts at the village school in September.",
        "Priya and Tomasz Novak moved to Ashby last spring with a daughter, Lena.",
    )
    assert found == {"Their daughter": "Lena"}


def test_a_named_relative_beside_the_kinship_noun_in_the_same_sentence() -> None:
    assert resolved("Her brother Anselm keeps the orchard.", "Greta wrote in June.") == {"Her brother": "Anselm"}


def test_their_daughter_without_a_name_resolves_the_possessive_only() -> None:
    found = resolved("Their daughter starts school soon.", "Priya and Tomasz Novak moved to Ashby.")
    assert found == {"Their": "Priya and Tomasz Novak"}


def test_he_is_a_person_named_not_a_place() -> None:
    found = resolved("He wrote to the parish council about it.", "Olu Bakare mended the gate in Ashby.")
    assert found["He"] == "Olu Bakare"


# --- a compliance notice -------------------------------------------------------------------------


def test_she_resolves_to_a_noun_phrase_naming_a_person() -> None:
    found = resolved(
        "She must sign the register before any dose leaves the shelf.", "A registered pharmacist checked each order."
    )
    assert found == {"She": "A registered pharmacist"}


def test_she_after_a_name_and_its_apposition_is_the_name() -> None:
    # "a registered pharmacist" is set beside the name by a comma: the same person, and the name
    # is what answers "who"; without a name the phrase still answers (test above).
    found = resolved(
        "She signed the register at noon.",
        "The order was checked on Monday by Ines Calder, a registered pharmacist, at the counter.",
    )
    assert found == {"She": "Ines Calder"}


def test_her_skips_a_phrase_that_cannot_be_a_person() -> None:
    # A ship is "her"; the boatyard is a place, never a "her".
    found = resolved("Tern is maintained by the Kessock boatyard, which overhauls her engines every winter.")
    assert found == {"her": "Tern"}


# --- a field notebook ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sentence", "context", "expected"),
    [
        ("It nested under the bridge.", ("The grey wagtail returned on 4 April.",), {"It": "The grey wagtail"}),
        ("Its call carried across the marsh.", ("We heard a bittern at dusk.",), {"Its": "a bittern"}),
    ],
)
def test_notebook_entries(sentence: str, context: tuple[str, ...], expected: dict[str, str]) -> None:
    assert resolved(sentence, *context) == expected


def test_a_date_is_never_an_antecedent() -> None:
    found = resolved("It was cold.", "The survey ended on 4 April 2024.")
    assert found == {"It": "The survey"}


@pytest.mark.parametrize(
    ("sentence", "context"),
    [
        # A recurring day: the phrase's head is a weekday, whatever comes before it.
        ("It must be booked a week ahead.", ("The choir rehearses in the chapel hall every first Thursday.",)),
        ("It is kept in the office.", ("Reports are collected by the clerk each Friday at 16:00.",)),
    ],
)
def test_a_phrase_headed_by_a_date_is_never_an_antecedent(sentence: str, context: tuple[str, ...]) -> None:
    assert not any(
        word in antecedent for antecedent in resolved(sentence, *context).values() for word in ("Thursday", "Friday")
    )


def test_a_name_holding_a_month_word_is_still_someone() -> None:
    # "May" is a month, but "Theresa May" is a person a later "she" stands for.
    found = resolved("She spoke first.", "Theresa May opened the debate.")
    assert found == {"She": "Theresa May"}


@pytest.mark.parametrize(
    ("sentence", "subject"),
    [
        ("A season ticket costs £120 and it covers every match.", "A season ticket"),
        ("The night bus fare costs £3 and it includes a transfer.", "The night bus fare"),
    ],
)
def test_the_verb_after_a_subject_is_not_part_of_its_phrase(sentence: str, subject: str) -> None:
    # Whatever tag the verb gets, the subject before it is the phrase "it" stands for.
    assert resolved(sentence) == {"it": subject}
