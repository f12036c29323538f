"""Answers that quote kept units: a claim with the units that support it, a procedure's steps
numbered afresh, and a comparison side by side. Every quote carries its unit's id."""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.answer.answer_forms import Draft, quoted_text
from core.question import Question
from core.question.intent_cues import QuestionCues, focus_coverage, unit_text
from core.text.tokenizer import tokenize
from core.units import KnowledgeUnit

MAX_SUPPORTING = 2


def claims_answer(units: Sequence[KnowledgeUnit], question: Question, lead: KnowledgeUnit, by_sentence: bool) -> Draft:
    """The lead unit's text, then up to two more kept units that cover enough focus words. With
    `by_sentence` (a question asking for claims, not one whose own form found nothing), only
    the sentences of a unit cut from prose that are about the question (`quoted_text`).
    Otherwise a question asking for a name or an item found none in the sentences naming its
    terms, so its answer may be a referent elsewhere in the unit or the heading the unit stands
    under ("5. Bus contract" over "… the decision be deferred to the May meeting"): such a unit
    is quoted whole, under its heading."""
    chosen = [lead, *supporting(units, question.cues, exclude={lead.id})]
    if by_sentence:
        text = " ".join(_quote(quoted_text(unit, question.terms), unit.id) for unit in chosen)
    else:
        text = " ".join(_quote(_under_heading(unit), unit.id) for unit in chosen)
    return Draft(text, tuple(u.id for u in chosen), f"quoted {lead.id} and {len(chosen) - 1} supporting unit(s)")


def _under_heading(unit: KnowledgeUnit) -> str:
    """A prose unit's text under the heading it was read beneath (the plain-text reader keeps a
    heading as the unit's title, not as its first words); an authored unit's body as it is."""
    if unit.location is None or not unit.location.prose or not unit.title:
        return unit.body
    return f"{unit.title.rstrip(':. ')}: {unit.body}"


def procedure_answer(lead: KnowledgeUnit, units: Sequence[KnowledgeUnit], cues: QuestionCues) -> Draft:
    """The procedure's steps, numbered afresh, under its intro (or topic), with its condition."""
    intro, steps = procedure_steps(lead.body)
    heading = (intro or lead.topic).rstrip(".: ")
    listed = (
        steps[0].rstrip(".")
        if len(steps) == 1
        else "; ".join(f"{n}. {step.rstrip('.')}" for n, step in enumerate(steps, start=1))
    )
    condition = f" (condition: {' '.join(lead.condition.split()).rstrip('.')})" if lead.condition else ""
    extra = supporting(units, cues, exclude={lead.id})
    text = " ".join([f"{heading}: {listed}{condition} [{lead.id}].", *(_quote(u.body, u.id) for u in extra)])
    return Draft(text, (lead.id, *(u.id for u in extra)), f"procedure of {lead.id}")


_BULLET = re.compile(r"^\s*(?:[-*+\u2022]|\d+[.)])\s+")
_INLINE_NUMBER = re.compile(r"(?:^|\s)\d+[.)]\s+")


def procedure_steps(procedure: str) -> tuple[str, list[str]]:
    """The intro before the first numbered or bulleted step, and the steps.

    One line is split at inline numbers ("Do X. 1. a 2. b"); several lines at bullets, an
    unmarked line continuing the step above it. Without any marks every line is a step.
    """
    lines = [" ".join(line.split()) for line in procedure.splitlines() if line.strip()]
    if len(lines) == 1:
        opening, *numbered = _INLINE_NUMBER.split(lines[0])
        return (opening.strip(), numbered) if numbered else ("", lines)
    if not any(_BULLET.match(line) for line in lines):
        return "", lines
    intro: list[str] = []
    steps: list[str] = []
    for line in lines:
        if _BULLET.match(line):
            steps.append(_BULLET.sub("", line))
        elif steps:
            steps[-1] += " " + line
        else:
            intro.append(line)
    return " ".join(intro), steps


def names_a_side(units: Sequence[KnowledgeUnit], cues: QuestionCues) -> bool:
    """Some unit mentions one of the compared sides."""
    return any(_mentions(u, tokenize(side)) for u in units for side in cues.compared)


def comparison_answer(units: Sequence[KnowledgeUnit], cues: QuestionCues) -> Draft:
    """Units naming every compared side first, then each side's own units; a side no quoted unit
    mentions is named as having no evidence."""
    sides = [(name, tokenize(name)) for name in cues.compared]
    used = [u for u in units if all(_mentions(u, stems) for _, stems in sides)][:MAX_SUPPORTING]
    parts = [_quote(u.body, u.id) for u in used]
    for name, stems in sides:
        own = [u for u in units if u not in used and _mentions(u, stems)][:MAX_SUPPORTING]
        if own:
            parts.append(f"{name}: " + " ".join(_quote(u.body, u.id) for u in own))
        elif not any(_mentions(u, stems) for u in used):
            parts.append(f"{name}: no kept evidence mentions it.")
        used += own
    cited = tuple(u.id for u in used)
    return Draft(" ".join(parts), cited, f"compared {' / '.join(cues.compared)} over {len(cited)} unit(s)")


def supporting(units: Sequence[KnowledgeUnit], cues: QuestionCues, exclude: set[str]) -> list[KnowledgeUnit]:
    """Kept units that alone cover enough focus words; one shared word ("file") is too little."""
    return [u for u in units if u.id not in exclude and _covers(u, cues)][:MAX_SUPPORTING]


def _covers(unit: KnowledgeUnit, cues: QuestionCues) -> bool:
    coverage = focus_coverage(cues, [unit_text(unit)])
    return coverage.enough and bool(coverage.covered)


def _mentions(unit: KnowledgeUnit, stems: list[str]) -> bool:
    words = set(tokenize(unit_text(unit)))
    return bool(stems) and all(stem in words for stem in stems)


def _quote(text: str, unit_id: str) -> str:
    """The unit's text on one line with its citation before the final full stop."""
    flat = " ".join(text.split()).rstrip(".")
    return f"{flat} [{unit_id}]."
