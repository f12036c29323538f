"""Stated before derived: a lead a cited unit states outranks a fact a rule derived, unless the
question asks for the derived relation.

"What treatment does the Hollow Lane apiary use?" was answered "varroa control" (Hollow Lane
apiary has_capability varroa control, by a rule) although a unit says it "uses oxalic acid
treatment". The question says "use", not "capability": it asks what a unit states, so the typed
lead from the cited sentence answers, and the proof stays in the run's proofs (the Proofs pane).
Asked "What does Orion depend on?", the question says the derived relation (depends_on) and the
chain answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from core.answer.answer_forms import Draft
from core.answer.short_answer import SHORT_TYPES, short_draft
from core.question import Question
from core.question.answer_types import Expected
from core.text.tokenizer import tokenize
from core.units import KnowledgeUnit

if TYPE_CHECKING:
    from core.retrieval.thinkingdb import Proof

# Lexicon links by which a question's word says a relation's word ("depend" / depends_on,
# "capable" / has_capability).
_SAYS = frozenset(("same-lemma", "derivation"))


def asks_relation(question: str, relation: str) -> bool:
    """Whether the question says the relation's name: one of its content words, as written, in
    another inflection, or by a lexicon link of the same lemma or a derivation."""
    from core.nlp import lexicon_or_none

    named = tokenize(relation.replace("_", " "))
    asked = tokenize(question)
    if set(named) & set(asked):
        return True
    lex = lexicon_or_none()
    if lex is None:
        return False
    words = [w.strip("?.,;:!'\"").lower() for w in question.split()]
    relation_words = [w for w in relation.replace("_", " ").split() if tokenize(w)]
    return any(
        (link := lex.link(word, name)) is not None and link.kind in _SAYS
        for word in words
        if word.isalpha()
        for name in relation_words
    )


def stated_lead(
    question: Question,
    expected: Expected,
    proof: Proof,
    units: Sequence[KnowledgeUnit],
    paragraphs: Sequence[KnowledgeUnit],
) -> Draft | None:
    """The typed lead a cited sentence states, when the question does not ask for the proof's
    derived relation and that lead passes the support check; else None (the chain answers)."""
    if expected.type not in SHORT_TYPES or asks_relation(question.text, proof.relation):
        return None
    short = short_draft(question, expected, units, paragraphs)
    if short is None or short[0].cannot_tell:
        return None
    draft, detail = short
    method = f"{draft.method}; stated before derived '{proof.fact}' (by {proof.rule}, in the proofs)"
    return replace(draft, method=method, detail=detail)
