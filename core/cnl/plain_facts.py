"""Plain text's facts: a sentence "X <verb> Y" becomes a (subject, relation, object) triple.

The rule is the plain-text reader's (core/cnl/plaintext.py docstring, "A sentence of the form"):
X and Y are short noun phrases, the verb one of `_FACT_VERBS`.
"""

from __future__ import annotations

import functools
import re

from core.text.words import CLAUSE_WORDS, FACT_ADVERBS, NOT_SUBJECTS
from core.units import Relation

_FACT_VERBS: dict[Relation, str] = {
    Relation.USES: r"uses?",
    Relation.PROVIDES: r"provides?",
    Relation.DEPENDS_ON: r"depends?\s+on",
    Relation.PART_OF: r"(?:is|are)\s+(?:a\s+)?part\s+of",
    Relation.INSTANCE_OF: r"(?:is|are)\s+(?:an?\s+)?instances?\s+of",
    Relation.RELEVANT_FOR: r"(?:is|are)\s+(?:relevant|useful)\s+(?:for|to)|helps?\s+with",
    Relation.SUPPORTS: r"supports?|enables?",
    Relation.MENTIONS: r"mentions?",
    Relation.ABOUT: r"(?:is|are)\s+about",
    Relation.CAUSES: r"causes?|leads?\s+to",
    Relation.HAS_CAPABILITY: r"(?:has|have)\s+(?:the\s+)?capability(?:\s+(?:of|to))?",
}
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
_MAX_PHRASE_WORDS = 8
_PUNCTUATION = re.compile(r"[,;:]")


@functools.cache
def _fact_pattern() -> tuple[re.Pattern[str], tuple[tuple[Relation, int], ...]]:
    """The fact pattern, and (relation, its group number in it): which verb matched, found without
    the Enum's value lookups. Compiled on first use: ~1 ms of CPU that a warm `mrptui ask`, which
    reads no file and whose sentences rarely open with a heading, need not pay (issue 41)."""
    verbs = "|".join(f"(?P<{rel.value}>{verb})" for rel, verb in _FACT_VERBS.items())
    pattern = re.compile(r"(?P<x>.+?)\s+(?:" + verbs + r")\s+(?P<y>.+)", re.IGNORECASE)
    return pattern, tuple((rel, pattern.groupindex[rel.value]) for rel in _FACT_VERBS)


def fact_triple(sentence: str) -> tuple[str, Relation, str] | None:
    """(subject, relation, object) when the sentence is one of the fact patterns, else None."""
    pattern, verb_groups = _fact_pattern()
    # Single spaces, as in the reader's sentences: `(?P<x>.+?)\s+` retries `\s+` over the rest of
    # a whitespace run at each of its characters, quadratic in a long run.
    match = pattern.fullmatch(" ".join(sentence.split()).rstrip(".!?\"')\u2019\u201d"))
    if match is None:
        return None
    relation = next(rel for rel, group in verb_groups if match.start(group) >= 0)
    raw_subject = match.group("x")
    if _lone_letter_name(raw_subject, match.group(relation.value)):
        subject: str | None = raw_subject.strip()
    else:
        subject = _noun_phrase(raw_subject, is_subject=True)
    obj = _noun_phrase(match.group("y"), is_subject=False)
    if subject is None or obj is None:
        return None
    return subject, relation, obj


def _lone_letter_name(subject: str, verb: str) -> bool:
    """ "A uses B": a single capital letter before a lowercase verb names something. Before a
    capitalised verb ("A Uses section …") it is an article inside a title, which stays refused."""
    letter = subject.strip()
    return len(letter) == 1 and letter.isupper() and verb.strip()[:1].islower()


def _noun_phrase(text: str, is_subject: bool) -> str | None:
    phrase = _ARTICLE.sub("", text.strip(" \"'\u2018\u2019\u201c\u201d()[]").rstrip(".,;:!?"), count=1)
    words = phrase.split()
    # Trailing adverbs ("Orion also uses ...") belong to the verb, not the subject.
    while is_subject and len(words) > 1 and words[-1].lower() in FACT_ADVERBS:
        words.pop()
    if not words or len(words) > _MAX_PHRASE_WORDS or _PUNCTUATION.search(phrase):
        return None
    lowered = [word.lower() for word in words]
    if not CLAUSE_WORDS.isdisjoint(lowered) or (is_subject and len(words) == 1 and lowered[0] in NOT_SUBJECTS):
        return None
    return " ".join(words)
