"""Pronouns and "the company"-style references resolved to the nearest compatible named antecedent.

A sentence saying "He cleared the strainer" answers "Who cleared the strainer?" only once "He" is
the "Olu" of a sentence before; "Their daughter" is someone's daughter only once "Their" is
named. The antecedent is the nearest name (a run of proper nouns) before the reference in the
same sentence, else in the sentences given as context (the same unit or the one before), nearest
first. Compatibility is what English marks: "he"/"she" name one person (not a name of several
words joined by "of" such as "Duchy of Normandy"), "it" names one thing, "they" anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.answer_types import DATE_PATTERN, Span, agents, name_spans
from core.tagging import Token, tag_text

_PERSONAL = frozenset("he him his she her hers".split())
_NEUTER = frozenset("it its".split())
_PLURAL = frozenset("they them their theirs".split())
# "the company", "the group": a definite class noun standing for a name said before.
_REFERRING_NOUNS = frozenset(
    "company firm group organisation organization team city country town family band party agency".split()
)


@dataclass(frozen=True)
class Resolution:
    reference: str
    antecedent: str

    def __str__(self) -> str:
        return f"{self.reference} \u2192 {self.antecedent}"


def mentions_reference(text: str) -> bool:
    """Whether the text has a word `resolve` may resolve (checked on words, before any tagging)."""
    words = [w.strip(".,;:!?\"'()").lower() for w in text.split()]
    return any(w in _PERSONAL | _NEUTER | _PLURAL for w in words) or any(
        a == "the" and b in _REFERRING_NOUNS for a, b in zip(words, words[1:])
    )


def resolve(tokens: Sequence[Token], text: str, context: Sequence[str]) -> dict[int, Resolution]:
    """Token index of each resolvable reference in the sentence → its antecedent."""
    found: dict[int, Resolution] = {}
    here_names = name_spans(tokens, text)
    here_agents = set(agents(here_names, tokens, text))
    earlier = []
    for line in context:
        line_tokens = tag_text(line)
        names = name_spans(line_tokens, line)
        earlier.append([(name, name in set(agents(names, line_tokens, line))) for name in names])
    for index, token in enumerate(tokens):
        lower = token.word.lower()
        referring = index > 0 and tokens[index - 1].word.lower() == "the" and lower in _REFERRING_NOUNS
        if lower not in _PERSONAL | _NEUTER | _PLURAL and not referring:
            continue
        before = [(name, name in here_agents) for name in here_names if name.last < index]
        pool = before[::-1] + [pair for names in reversed(earlier) for pair in reversed(names)]
        match = next((name for name, agent in pool if _compatible(lower, name, agent)), None)
        if match is not None:
            reference = f"the {token.word}" if referring else token.word
            found[index] = Resolution(reference, match.text)
    return found


def _compatible(reference: str, name: Span, agent: bool) -> bool:
    """A date is when, not who or what; "he"/"she" name one person: someone who can act (not a
    place after "in"/"to"), not a name of several words joined by "of"."""
    if DATE_PATTERN.fullmatch(name.text):
        return False
    if reference in _PERSONAL:
        return agent and " of " not in f" {name.text} " and len(name.text.split()) <= 3
    return True
