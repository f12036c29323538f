"""Evidence sentences: what answer forms match, and the passages they quote (the question's terms are
core/question/terms.py).

A passage is a sentence of a kept unit plus neighbouring kept sentences of the same stretch of
text. Rules of thumb are listed in docs/decisions.md under "Answer forms".
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from core.cnl import split_sentences
from core.question.terms import Term
from core.text.tokenizer import tokenize
from core.units import KnowledgeUnit

# Sentences before a match that may hold its pronoun's referent.
_WINDOW_BEFORE = 2
# A paragraph's units are read this far either side of a kept one (plain-text units hold at
# most three sentences, so this covers a long paragraph).
_PARAGRAPH_UNITS = 6
# Units starting within this many lines of each other are one stretch of text: a paragraph's
# units, or the paragraph after a blank line. Farther apart they may be pages apart.
_NEIGHBOUR_LINES = 3


@dataclass(frozen=True)
class Sentence:
    """One sentence of a unit's text, with the unit it came from and its stems."""

    text: str
    unit: KnowledgeUnit
    stems: frozenset[str]

    def cited(self) -> str:
        return f"{self.text.rstrip('.')} [{self.unit.id}]."


class Evidence:
    """The kept units' sentences, in rank order and in reading order (by source and position)."""

    def __init__(self, units: Sequence[KnowledgeUnit]):
        self.units = list(units)
        self.by_unit: dict[str, list[Sentence]] = {}
        for unit in self.units:
            # A unit whose topic is the question it answers (an FAQ entry) is about that question in
            # every sentence: "Report it to the warden" answers "Who do I contact about a broken gate?".
            asked = frozenset(tokenize(unit.topic)) if unit.topic.rstrip().endswith("?") else frozenset()
            self.by_unit[unit.id] = [
                Sentence(s.text, unit, frozenset(tokenize(s.text)) | asked) for s in split_sentences(unit.body)
            ]
        reading = sorted(self.units, key=_reading_key)
        self.reading: list[Sentence] = [s for unit in reading for s in self.by_unit[unit.id]]
        self._position = {id(s): i for i, s in enumerate(self.reading)}

    def ranked(self) -> Iterator[Sentence]:
        for unit in self.units:
            yield from self.by_unit[unit.id]

    def around(self, sentence: Sentence, before: int, after: int) -> tuple[list[Sentence], list[Sentence]]:
        """Neighbouring kept sentences: of the same unit, or of a kept unit of the same file that
        starts within a few lines of it (the next or previous stretch of text, not a later page)."""
        at = self._position[id(sentence)]
        earlier = [s for s in self.reading[max(0, at - before) : at] if _adjacent(s.unit, sentence.unit)]
        later = [s for s in self.reading[at + 1 : at + 1 + after] if _adjacent(s.unit, sentence.unit)]
        return earlier, later


def paragraph_units(view: UnitsByFile, kept: Sequence[KnowledgeUnit]) -> list[KnowledgeUnit]:
    """Units of the kept units' paragraphs that were not kept, in reading order: a paragraph's
    next unit holds the rest of what a kept unit began ("three causes … The third …", a
    reason after the sentence it explains). Only units of `view` count (the caller's view, so
    nothing the caller may not see), each paragraph is read at most `_PARAGRAPH_UNITS` units
    either side of a kept unit, and only units of the same stretch of text (`_adjacent`: one
    file, starting within a few lines), so a Markdown KB's units stay apart. Neighbours are
    found by position in the file, not by id, since plain-text ids hash the unit's words. A kept
    fact (a unit with a triple) does not read on: it states one thing on its own, and ThinkingDB
    chains facts."""
    kept_ids = {unit.id for unit in kept}
    found: dict[str, KnowledgeUnit] = {}
    for unit in kept:
        if _is_fact(unit) or unit.location is None:
            continue
        ordered = view.in_file(unit.location.file)
        try:
            position = ordered.index(unit)
        except ValueError:
            continue
        for step in (-1, 1):
            for offset in range(1, _PARAGRAPH_UNITS + 1):
                index = position + step * offset
                if not 0 <= index < len(ordered) or not _adjacent(unit, ordered[index]):
                    break
                if ordered[index].id not in kept_ids:
                    found.setdefault(ordered[index].id, ordered[index])
    return sorted(found.values(), key=_reading_key)


class UnitsByFile(Protocol):
    def in_file(self, file: str) -> Sequence[KnowledgeUnit]: ...


def _is_fact(unit: KnowledgeUnit) -> bool:
    return unit.subject is not None and unit.object is not None


def _adjacent(one: KnowledgeUnit, other: KnowledgeUnit) -> bool:
    """One stretch of text: the same file, a few lines apart, and for text cut from prose no
    heading between them (the reader gives each unit the heading above it as its title): the
    last sentence of "1. Minutes" is not a reason for the first of "2. Treasurer's report"."""
    if one.id == other.id:
        return True
    a, b = one.location, other.location
    if a is None or b is None or a.file != b.file or abs(a.line - b.line) > _NEIGHBOUR_LINES:
        return False
    return not (a.prose and b.prose and one.title != other.title)


def _reading_key(unit: KnowledgeUnit) -> tuple[str, str, int, int, str]:
    """Source, file, line and column: the order the units were written in."""
    where = unit.location
    return (unit.source_id, where.file if where else "", where.line if where else 0, where.col if where else 0, unit.id)


def covered(terms: Sequence[Term], sentences: Sequence[Sentence]) -> list[Term]:
    seen: set[str] = set().union(*(s.stems for s in sentences)) if sentences else set()
    return [term for term in terms if term.found_in(seen)]


def passage(sentence: Sentence, terms: Sequence[Term], evidence: Evidence) -> list[Sentence]:
    """The sentence and as few sentences before it as add question terms (a pronoun's referent:
    "Ines spent six minutes on the vault lock. The lock did not need force")."""
    window = [sentence]
    earlier, _ = evidence.around(sentence, _WINDOW_BEFORE, 0)
    for before in reversed(earlier):
        if len(covered(terms, [before, *window])) > len(covered(terms, window)):
            window.insert(0, before)
    return window
