"""Why-not's "support" row: how well the unit's best sentence says what the question asks, with
every lexicon link it took to say so ("notebook ≈ laptop: both kinds of portable computer"), the
same coverage the answer's support check applies (core/answer/term_coverage.py)."""

from __future__ import annotations

from core.answer.passages import Evidence
from core.answer.term_coverage import Coverage, coverage
from core.nlp.tagging import tag_text
from core.question import Question
from core.units import KnowledgeUnit

# Sentences of one unit read for the row, at most (a unit is a few sentences; a long one is cut).
MAX_SENTENCES = 40


def support_reason(unit: KnowledgeUnit, question: str) -> str:
    """The unit's sentence that covers most of the question's focus terms, what it leaves
    unsaid, the lexicon links that covered the rest and any word it says the opposite of."""
    terms = Question(question).terms
    if not terms:
        return "the question names no focus terms"
    best: tuple[Coverage, str] | None = None
    for index, sentence in enumerate(Evidence([unit]).ranked()):
        if index >= MAX_SENTENCES:
            break
        found = coverage(terms, [t.word for t in tag_text(sentence.text)])
        if best is None or len(found.covered) > len(best[0].covered):
            best = (found, sentence.text)
    if best is None:
        return "the unit has no sentence to read"
    found, text = best
    parts = [f"best sentence covers {len(found.covered)} of {len(terms)} focus terms: \u201c{text}\u201d"]
    if found.missing:
        parts.append(f"does not say: {', '.join(found.missing)}")
    parts += [f"lexicon link: {via}" for via in found.links]
    parts += [f"says the opposite: {via}" for via in found.opposed]
    return "; ".join(parts)
