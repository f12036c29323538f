"""What a follow-up question leaves out, as `core.memory.followup` finds it and
`core.memory.completion` fills it in: the elliptical frame ("And X?"), "the same X", a bare "Why?",
the third-person pronouns grouped by what they stand for, and the records a follow-up is completed
from. Its own module so that the completion, loaded only when there is something to complete
(issue 41), and the referent model read them without importing the resolver back."""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.text.words import PRONOUN_GROUPS

ELLIPSIS = re.compile(r"^\s*(?:and|what about|how about)\s+(?P<what>[^?]+?)\s*\??\s*$", re.IGNORECASE)
SAME = re.compile(r"\bthe same(?:\s+(?P<what>\w+))?\b", re.IGNORECASE)
WHY = re.compile(r"^\s*why\s*\??\s*$", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z']+")


@dataclass(frozen=True)
class Candidate:
    """A scored memory record as a follow-up sees it."""

    id: str
    turn: int
    question: str
    lead: str
    entity: str
    score: float
    # The text of the units its answer cited that the run's view shows (sd-symbolic reads them
    # from its own view: a unit the caller cannot see is never read), and of their whole files.
    story: tuple[str, ...] = ()
    document: str = ""


@dataclass(frozen=True)
class Resolution:
    """A follow-up question as completed from the conversation, what it used, and the pronouns it
    left as asked."""

    question: str
    notes: tuple[str, ...] = ()
    used: tuple[str, ...] = ()
    # Why a pronoun was left as asked: "could not tell who 'she' is: Anna or her mother …".
    unresolved: tuple[str, ...] = ()


def pronoun_groups(question: str) -> dict[str, list[str]]:
    """The question's third-person pronouns, grouped by what they stand for."""
    words = [w.lower() for w in _WORD.findall(question)]
    return {
        group: [w for w in words if w in members]
        for group, members in PRONOUN_GROUPS.items()
        if any(w in members for w in words)
    }
