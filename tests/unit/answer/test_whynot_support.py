"""Why-not's support row: the unit's best sentence against the question's focus terms, with the
lexicon links that covered terms the sentence words differently."""

from __future__ import annotations

from core.answer.whynot_support import support_reason
from core.units import KnowledgeUnit, Role


def unit(claim: str) -> KnowledgeUnit:
    return KnowledgeUnit(
        id="kennel::chunk-000::unit-000",
        source_id="kennel",
        chunk_id="kennel::chunk-000",
        role=Role.DESCRIPTION,
        topic="Boarding",
        claim=claim,
    )


def test_the_row_names_the_best_sentence_and_what_it_leaves_unsaid() -> None:
    reason = support_reason(
        unit("The kennel opens at seven. Dogs are walked twice a day by the staff."),
        "How often are dogs walked at the kennel?",
    )
    assert "best sentence covers" in reason and "Dogs are walked twice a day" in reason
    assert "does not say:" in reason and "kennel" in reason.split("does not say:")[1]


def test_a_lexicon_link_that_covers_a_term_is_shown() -> None:
    # "died" says "death" through a derivation the lexicon knows; the row says so.
    reason = support_reason(unit("The old keeper died in the winter storm."), "When was the death of the keeper?")
    assert "lexicon link: death" in reason and "die" in reason
    assert "does not say" not in reason


def test_a_word_the_sentence_says_the_opposite_of_is_named() -> None:
    reason = support_reason(unit("The away team lost the final on penalties."), "Which team won the final?")
    assert "says the opposite" in reason and ("win" in reason or "won" in reason)
