"""The score breakdown says how the answer used a cited unit: its lead, the support check and the
lexicon links and references the check relied on; an uncited unit gets no such section."""

from __future__ import annotations

from core.kernel.events import AnswerDetail, AnswerPart, AnswerReady
from mrptui.screens.evidence_detail import answer_use_markup

CITED = "shop::chunk-000::unit-002"


def answer() -> AnswerReady:
    detail = AnswerDetail(
        answer_type="thing",
        lead="a twelve-month warranty",
        supported=True,
        support="passed; covers 2 of 2 focus terms",
        links=("notebook ≈ laptop: both kinds of portable computer",),
        resolved=("It → the refurbished laptop",),
    )
    text = f"a twelve-month warranty, because: It ships with a twelve-month warranty [{CITED}]."
    part = AnswerPart(intent_index=0, target="q", answer=text, status="grounded", cited_ids=(CITED,), detail=detail)
    return AnswerReady(answer=text, status="grounded", evidence_ids=(CITED,), parts=(part,))


def test_a_cited_unit_shows_the_lead_support_links_and_references() -> None:
    markup = answer_use_markup(CITED, answer())
    assert "lead [b]a twelve-month warranty[/b]" in markup and "support passed" in markup
    assert "lexicon link:[/] notebook ≈ laptop: both kinds of portable computer" in markup
    assert "reference:[/] It → the refurbished laptop" in markup


def test_a_unit_the_answer_does_not_cite_shows_nothing() -> None:
    assert answer_use_markup("shop::chunk-000::unit-009", answer()) == ""
    assert answer_use_markup(CITED, None) == ""
