"""Follow-up questions: what a question leaves out ("it", "their", "the same", "And Helix?") is
completed from the best-scored memory record, and the intent says so.

    "Who maintains it?"     + record about Orion       → "Who maintains Orion?"
    "And Helix?"            + "Who maintains Orion?"   → "Who maintains Helix?"
    "Does Helix use the same database?" + lead "Postgres" → "Does Helix use Postgres?"

Only the caller's own records are offered (core/memory/conversation.py), already scored; a record
below `minScore` is never used. Nothing is guessed when no record qualifies: the question stays as asked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

# Pronouns that stand for a thing or person named earlier. "this"/"that" are left alone: they
# usually point into the same question ("What does that mean?").
_PRONOUN = re.compile(r"\b(it|they|them|he|him|she)\b", re.IGNORECASE)
_POSSESSIVE = re.compile(r"\b(its|their|his|her)\b(?=\s+\w)", re.IGNORECASE)
_ELLIPSIS = re.compile(r"^\s*(?:and|what about|how about)\s+(?P<what>[^?]+?)\s*\??\s*$", re.IGNORECASE)
_SAME = re.compile(r"\bthe same(?:\s+\w+)?\b", re.IGNORECASE)
# A lead longer than this is a sentence, not a thing "the same" can stand for.
_MAX_SAME_WORDS = 6


@dataclass(frozen=True)
class Candidate:
    """A scored memory record as a follow-up sees it."""

    id: str
    turn: int
    question: str
    lead: str
    entity: str
    score: float


@dataclass(frozen=True)
class Resolution:
    question: str
    notes: tuple[str, ...] = ()
    used: tuple[str, ...] = ()


def resolve(question: str, candidates: Sequence[Candidate], min_score: float) -> Resolution:
    """`question` with what it leaves out filled in from the best candidate at or above `min_score`."""
    usable = [c for c in candidates if c.score >= min_score]
    if not usable:
        return Resolution(question)
    ellipsis = _ELLIPSIS.match(question)
    if ellipsis:
        return _ellipsis(question, ellipsis.group("what"), usable)
    # A pronoun continues what was talked about last: of the usable records, the latest turn's
    # entity (the score only decides which records are usable; a longer lead must not make an
    # older turn win).
    named = max((c for c in usable if c.entity), key=lambda c: c.turn, default=None)
    rewritten, notes, used = question, [], []
    if named is not None and (_PRONOUN.search(question) or _POSSESSIVE.search(question)):
        rewritten = _POSSESSIVE.sub(lambda m: f"{named.entity}'s", rewritten)
        rewritten = _PRONOUN.sub(named.entity, rewritten)
        notes.append(_note(question, named.entity, named))
        used.append(named.id)
    same = _SAME.search(rewritten)
    short = next((c for c in usable if c.lead and len(c.lead.split()) <= _MAX_SAME_WORDS), None)
    if same and short is not None:
        rewritten = rewritten[: same.start()] + short.lead.rstrip(".") + rewritten[same.end():]
        notes.append(f"{same.group(0)} → {short.lead.rstrip('.')}, from turn {short.turn}, memory score {short.score:.2f}")
        used.append(short.id)
    return Resolution(rewritten, tuple(notes), tuple(dict.fromkeys(used)))


def _ellipsis(question: str, what: str, usable: Sequence[Candidate]) -> Resolution:
    """ "And X?": the last question asked about something else, asked again about X."""
    base = next((c for c in usable if c.entity and c.entity.lower() in c.question.lower()), None)
    if base is None:
        return Resolution(question)
    start = base.question.lower().index(base.entity.lower())
    rewritten = base.question[:start] + what + base.question[start + len(base.entity):]
    note = f"{question.strip()} → {rewritten}, from turn {base.turn}, memory score {base.score:.2f}"
    return Resolution(rewritten, (note,), (base.id,))


def _note(question: str, entity: str, candidate: Candidate) -> str:
    words = sorted({m.group(0).lower() for m in (*_PRONOUN.finditer(question), *_POSSESSIVE.finditer(question))})
    return f"{'/'.join(words)} → {entity}, from turn {candidate.turn}, memory score {candidate.score:.2f}"
