"""Answer types from the question's wording, and spans of those types in sentences of domains
written for this test (a bakery, an orchestra, a ferry line, a beekeepers' club)."""

from __future__ import annotations

import pytest

from core.nlp.tagging import tag_text
from core.question.answer_types import AnswerType, expected_type
from core.question.typed_spans import typed_spans


@pytest.mark.parametrize(
    ("question", "kind", "head"),
    [
        ("Who tuned the harpsichord before the concert?", AnswerType.PERSON, ""),
        ("Which violinist replaced the soloist?", AnswerType.PERSON, "violinist"),
        ("When did the night ferry stop running?", AnswerType.DATE, ""),
        ("In what year did the bakery open?", AnswerType.DATE, "year"),
        ("Where do the bees winter?", AnswerType.PLACE, ""),
        ("Which harbour does the ferry leave from?", AnswerType.PLACE, "harbour"),
        ("How many loaves does the oven hold?", AnswerType.NUMBER, "loaves"),
        ("How long does the crossing take?", AnswerType.NUMBER, ""),
        ("What percentage of the hives survived?", AnswerType.NUMBER, "percentage"),
        ("What flour does the baker prefer?", AnswerType.KIND, "flour"),
        ("What type of yeast goes into the rye bread?", AnswerType.KIND, "yeast"),
        ("Why was the rehearsal cancelled?", AnswerType.REASON, ""),
        ("How did the keeper calm the swarm?", AnswerType.MANNER, ""),
        ("Is the ferry running on Sundays?", AnswerType.YES_NO, ""),
        ("List the instruments of the brass section.", AnswerType.LIST, ""),
        ("In which order are the kilns fired?", AnswerType.LIST, ""),
        ("What order of monks ran the abbey?", AnswerType.KIND, "order"),
        ("What is a bain-marie?", AnswerType.DEFINITION, ""),
        ("What is kneading?", AnswerType.DEFINITION, ""),
        ("What is the Fresnel lens?", AnswerType.DEFINITION, ""),
        ("What is the famous rock near the harbour?", AnswerType.KIND, "rock"),
        ("What did the baker add to the dough?", AnswerType.THING, ""),
        # A passive with its preposition left at the end asks for that preposition's object, not
        # a kind of the subject; a participle whose phrase goes on still names a kind.
        ("What is the kitchen floor covered in?", AnswerType.THING, ""),
        ("What were the old kilns usually built of?", AnswerType.THING, ""),
        ("What was the first cake baked by the new oven?", AnswerType.KIND, "cake"),
        # The tagger calls "fort" a verb before "did"; between "what" and an auxiliary it is the noun asked for.
        ("In 1755 what fort did British capture?", AnswerType.KIND, "fort"),
        ("How many loaves did the baker sell on Monday?", AnswerType.NUMBER, "loaves"),
        # A noun is typed by its likeliest lemma's commonest senses: "parts" is no place (a rare
        # lemma's "these parts"), "line" no place (a fortified line); "town" is one, whatever
        # the lexicon merged into "town" (the architect Ithiel Town), and "locations" names its class.
        ("Which parts does the ferry need?", AnswerType.KIND, "parts"),
        ("Which line does the ferry run on?", AnswerType.KIND, "line"),
        ("Which towns does the ferry leave from?", AnswerType.PLACE, "towns"),
        ("Which locations does the ferry call at?", AnswerType.PLACE, "locations"),
        ("ferry timetable winter", AnswerType.DESCRIPTION, ""),
    ],
)
def test_the_question_says_what_type_of_answer_it_wants(question: str, kind: AnswerType, head: str) -> None:
    expected = expected_type(question)
    assert (expected.type, expected.head) == (kind, head)


def spans(sentence: str, question: str) -> list[str]:
    return [span.text for span in typed_spans(tag_text(sentence), sentence, expected_type(question))]


def test_dates_numbers_and_names_are_found_by_their_shape() -> None:
    sentence = "On 3 March 1998 Marta Olsen opened the bakery in Tromsø with 40 loaves and 12% rye."
    assert "3 March 1998" in spans(sentence, "When did the bakery open?")
    assert spans(sentence, "How many loaves did it bake?") == ["40", "12%"]
    assert spans(sentence, "What percentage of the flour was rye?") == ["12%"]
    # A person is never a name after a place preposition.
    assert spans(sentence, "Who opened the bakery?") == ["Marta Olsen"]
    assert "Tromsø" in spans(sentence, "Where did the bakery open?")


def test_a_year_is_not_a_quantity_and_a_number_keeps_its_unit_unless_asked() -> None:
    sentence = "In 2011 the ferry carried 900 passengers across in 45 minutes."
    assert spans(sentence, "How long does the crossing take?") == ["900 passengers", "45 minutes"]
    assert spans(sentence, "How many passengers did it carry?") == ["900", "45"]


def test_names_join_across_of_and_the() -> None:
    sentence = "The Duke of Mantua hired Pietro the Younger to lead the choir."
    assert spans(sentence, "Who led the choir?") == ["Duke of Mantua", "Pietro the Younger"]


def test_names_join_across_the_particles_of_european_names() -> None:
    # "des" split "Cabane des Aiguilles" into "Cabane", which then answered a question about a code.
    sentence = "The choir sang at the Cabane des Aiguilles, then in the Palazzo della Ragione for Mies van der Rohe."
    assert spans(sentence, "Where did the choir sing?")[:2] == ["Cabane des Aiguilles", "Palazzo della Ragione"]
    assert "Mies van der Rohe" in spans(sentence, "Who did the choir sing for?")


def test_a_definition_is_what_follows_the_copula_to_the_end_of_its_clause() -> None:
    sentence = "A bain-marie is a hot water bath for gentle cooking, used for custards."
    assert spans(sentence, "What is a bain-marie?") == ["a hot water bath for gentle cooking"]


def test_places_are_names_or_physical_things_after_a_locative_preposition() -> None:
    sentence = (
        "On Monday the beekeepers moved the hives by cart into two stone sheds behind the old mill in the evening."
    )
    expected = expected_type("Where were the hives moved?")
    # "Monday" is a day and "the evening" a time; "cart" after "by" is no place.
    assert [s.text for s in typed_spans(tag_text(sentence), sentence, expected)] == ["two stone sheds", "the old mill"]
