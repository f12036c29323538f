"""Yes or no from the polarity of the evidence: a passage that states the question, one that denies
it, or none (cannot tell). Rules of thumb are listed in docs/decisions.md under "Answer forms"."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.plugins.passages import EDGE, Evidence, Sentence, Term, covered, passage
from core.text import tokenize

# A yes/no question with this many terms may leave one unmatched (an irregular verb form such as
# "see"/"seen" defeats the stemmer); with fewer, every term must be in the evidence.
_LENIENT_FROM_TERMS = 4
# Words that deny what their clause states. A cue the question itself uses ("Was the claim
# denied?", "… without a reason?") is the thing asked about, not a denial, so it is skipped there.
_NEGATIONS = frozenset("not never nobody nothing neither nor cannot without refused declined denied lacked".split())
# Determiners deny only the noun they stand before: "no ledger" denies a ledger, "at no charge"
# denies nothing the question asks about.
_NOUN_NEGATIONS = frozenset("no none".split())
_CLAUSE_BREAK = re.compile(r"[,;:\u2013\u2014]|\b(?:but|although|though|because|while|whereas|yet)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Verdict:
    """Yes, No, or None (cannot tell), with the sentences that decided it."""

    answer: str | None
    because: tuple[Sentence, ...]


def yes_no(question: str, terms: Sequence[Term], evidence: Evidence) -> Verdict:
    """Yes when a passage states every term (one may be missing among four or more) and no such
    passage denies it; No when one does, a negation word sharing a clause with a question term;
    otherwise cannot tell, quoting the closest passage. Co-mention alone is weak support, so one
    denial outweighs any number of statements ("asked the priory to pay" / "the priory refused")."""
    need = len(terms) - 1 if len(terms) >= _LENIENT_FROM_TERMS else len(terms)
    passages = []
    for rank, sentence in enumerate(evidence.ranked()):
        if covered(terms, [sentence]):
            window = passage(sentence, terms, evidence)
            passages.append((len(covered(terms, window)), -len(window), rank, tuple(window), sentence))
    passages.sort(key=lambda p: (-p[0], -p[1], p[2]))
    stated = [p for p in passages if terms and p[0] >= need]
    if not stated:
        closest = passages[0][3] if passages else ()
        return Verdict(None, closest)
    for _, _, _, window, sentence in stated:
        if denies(sentence, terms, question):
            return Verdict("No", window)
    return Verdict("Yes", stated[0][3])


def denies(sentence: Sentence, terms: Sequence[Term], question: str) -> bool:
    """A negation word in a clause naming a question term, or a question word replaced at its
    place ("Is it a good fit?" / "It is a poor fit")."""
    asked = {w.strip(EDGE).lower() for w in question.split()}
    for clause in _CLAUSE_BREAK.split(sentence.text):
        words = [w.strip(EDGE).lower() for w in clause.split()]
        named = covered(terms, [Sentence(clause, sentence.unit, frozenset(tokenize(clause)))])
        for index, word in enumerate(words):
            if word in asked:
                continue
            if (word in _NEGATIONS or word.endswith("n't")) and named:
                return True
            following = set(tokenize(" ".join(words[index + 1 : index + 3])))
            if word in _NOUN_NEGATIONS and any(term.found_in(following) for term in terms):
                return True
    return replaced(sentence, terms, question)


def replaced(sentence: Sentence, terms: Sequence[Term], question: str) -> bool:
    """A question word the sentence lacks, directly before a question word the sentence has, with
    another content word in its place: "a good fit" asked, "a poor fit" stated."""
    asked = [w.strip(EDGE).lower() for w in question.split()]
    said = [w.strip(EDGE).lower() for w in sentence.text.split()]
    missing = {t.word for t in terms if not t.is_name and not t.found_in(set(sentence.stems))}
    for word, after in zip(asked, asked[1:]):
        if word not in missing or not tokenize(after):
            continue
        for index, here in enumerate(said[1:], start=1):
            before = said[index - 1]
            if tokenize(here) == tokenize(after) and tokenize(before) and tokenize(before) != tokenize(word):
                return True
    return False
