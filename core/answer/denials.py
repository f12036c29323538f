"""How a sentence can deny what a yes/no question asks without a negated verb: a negation in a
clause naming a question term, a lexicon antonym in an asked word's place, another word in that
place ("a poor fit" asked "a good fit"), or a statement the sentence only offers or plans and a
later one refuses. core/answer/polarity.py weighs these against the sentences that state it."""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.answer.passages import Evidence, Sentence, covered
from core.answer.term_coverage import coverage
from core.nlp.tagging import tag_text
from core.question.terms import EDGE, Term
from core.text.tokenizer import tokenize
from core.text.words import CLAUSE_CONJUNCTIONS, DENIALS, NOUN_NEGATIONS, UNREALISED_MARKERS, any_of

# A negation denies only its own clause: clauses split at these marks and conjunctions.
CLAUSE_BREAK = re.compile(rf"[,;:\u2013\u2014]|\b{any_of(CLAUSE_CONJUNCTIONS)}\b", re.IGNORECASE)
# Sentences after an unrealised statement where its refusal may follow ("… I declined the offer").
_REFUSAL_AFTER = 2


def unrealised(sentence: Sentence, terms: Sequence[Term], question: str) -> str | None:
    """The word framing a question term the sentence only offers, plans or asks for ("offered to
    launch", "would launch"): the word before "to" or the modal, or None when the sentence states
    every term. A question that asks what can or may be done ("Can a member borrow …?"), or puts
    the term after "to" itself, asks about the offer, so the offer answers it."""
    asked = [w.strip(EDGE).lower() for w in question.split()]
    if any(w in UNREALISED_MARKERS and w != "to" for w in asked):
        return None
    said = [w.strip(EDGE).lower() for w in sentence.text.split()]
    for term in terms:
        if term.is_name or any(_framed(asked, i) for i, w in enumerate(asked) if term.found_in(set(tokenize(w)))):
            continue
        places = [i for i, w in enumerate(said) if term.found_in(set(tokenize(w)))]
        if places and all(_framed(said, i) for i in places):
            return said[places[0] - 2] if places[0] >= 2 else said[places[0] - 1]
    return None


def _framed(words: Sequence[str], index: int) -> bool:
    return index > 0 and words[index - 1] in UNREALISED_MARKERS


def refused(sentence: Sentence, frame: str, evidence: Evidence) -> Sentence | None:
    """A later sentence nearby that denies the frame ("offered to launch" / "I declined the
    offer"): a negation word and the frame's stem in one clause."""
    stems = set(tokenize(frame))
    _, later = evidence.around(sentence, 0, _REFUSAL_AFTER)
    for candidate in later:
        for clause in CLAUSE_BREAK.split(candidate.text):
            words = [w.strip(EDGE).lower() for w in clause.split()]
            if stems & set(tokenize(clause)) and any(w in DENIALS or w.endswith("n't") for w in words):
                return candidate
    return None


def denies(sentence: Sentence, terms: Sequence[Term], question: str, window: Sequence[Sentence] = ()) -> bool:
    """A negation word in a clause naming a question term, the opposite of a question word in
    such a clause, or a question word replaced at its place ("Is it a good fit?" / "It is a
    poor fit")."""
    asked = {w.strip(EDGE).lower() for w in question.split()}
    for clause in CLAUSE_BREAK.split(sentence.text):
        words = [w.strip(EDGE).lower() for w in clause.split()]
        named = covered(terms, [Sentence(clause, sentence.unit, frozenset(tokenize(clause)))])
        for index, word in enumerate(words):
            if word in asked:
                continue
            if (word in DENIALS or word.endswith("n't")) and named:
                return True
            following = set(tokenize(" ".join(words[index + 1 : index + 3])))
            if word in NOUN_NEGATIONS and any(term.found_in(following) for term in terms):
                return True
    return opposed(sentence, terms) or replaced(sentence, terms, question, window)


def denied_otherwise(sentence: Sentence, terms: Sequence[Term], question: str, window: Sequence[Sentence]) -> bool:
    """A denial that is no negated verb: "no" or "except" before a question term, the opposite of
    a question word, or another word in an asked word's place."""
    asked = {w.strip(EDGE).lower() for w in question.split()}
    words = [w.strip(EDGE).lower() for w in sentence.text.split()]
    for index, word in enumerate(words):
        following = set(tokenize(" ".join(words[index + 1 : index + 3])))
        if word not in asked and word in NOUN_NEGATIONS and any(term.found_in(following) for term in terms):
            return True
    return opposed(sentence, terms) or replaced(sentence, terms, question, window)


def opposed(sentence: Sentence, terms: Sequence[Term]) -> bool:
    """A clause naming some question terms that says the opposite (a lexicon antonym) of another
    in its place: asked "Is the library open on Sundays?", the clause "and closed on Sundays"."""
    for clause in CLAUSE_BREAK.split(sentence.text):
        named = covered(terms, [Sentence(clause, sentence.unit, frozenset(tokenize(clause)))])
        others = [t for t in terms if t not in named and not t.is_name]
        if named and others and coverage(others, [w.strip(EDGE) for w in clause.split()]).opposed:
            return True
    return False


def replaced(sentence: Sentence, terms: Sequence[Term], question: str, window: Sequence[Sentence] = ()) -> bool:
    """A question word the sentence lacks, directly before a question word the sentence has, with
    another content word in its place: "a good fit" asked, "a poor fit" stated, the sentence
    saying the rest of the asked phrase ("… for transactional workloads"). A word an earlier
    sentence of the passage holds in another phrase is only not repeated ("the gymnasium roof
    leaks. The full repair …"); held in the asked phrase itself, it is said of something else,
    and the sentence contrasts with it ("a good fit for teams that … It is a poor fit for …")."""
    asked = [w.strip(EDGE).lower() for w in question.split()]
    said = [w.strip(EDGE).lower() for w in sentence.text.split()]
    own = set(sentence.stems)
    missing = {t.word for t in terms if not t.is_name and not t.found_in(own)}
    for at, (word, after) in enumerate(zip(asked, asked[1:])):
        if word not in missing or not tokenize(after):
            continue
        # The sentence must say the rest of the asked phrase too: "a poor fit for porcelain" does
        # not answer "a good fit for stoneware?".
        rest = set(asked[at + 1 :])
        if not all(t.found_in(own) for t in terms if t.word in rest and not t.is_name):
            continue
        if any(_holds_apart(other, word, after) for other in window if other is not sentence):
            continue
        for index, here in enumerate(said[1:], start=1):
            before = said[index - 1]
            if (
                tokenize(here) == tokenize(after)
                and tokenize(before)
                and tokenize(before) != tokenize(word)
                and _same_class(_tag_of(word, question), _tag_of(before, sentence.text))
            ):
                return True
    return False


# Words that stand in one another's place before a noun: a modifier, adjective or noun ("a good
# fit" / "a poor fit", "a wooden table" / "a metal table"). A name or a verb is no such modifier.
_MODIFIER_TAGS = frozenset(("ADJ", "NOUN"))


def _same_class(asked: str | None, said: str | None) -> bool:
    """Whether a sentence's word can stand in the place of an asked one: the same part of speech,
    or both modifiers. "AAA Five Diamond hotels" puts a name beside, not in place of, "many"
    ("many Five Diamond hotels"); "the driver's seat" answers no "switch seats"."""
    if asked is None or said is None:
        return True
    return asked == said or (asked in _MODIFIER_TAGS and said in _MODIFIER_TAGS)


def _tag_of(word: str, text: str) -> str | None:
    """The tag of `word`'s first occurrence in `text`, as the tagger reads the whole text (which
    splits a possessive "'s" off its noun)."""
    bare = word.removesuffix("'s").removesuffix("\u2019s")
    return next((t.tag for t in tag_text(text) if t.word.strip(EDGE).lower() == bare), None)


def _holds_apart(sentence: Sentence, word: str, after: str) -> bool:
    """Whether `sentence` has `word` other than directly before `after`."""
    stems = [tokenize(w.strip(EDGE).lower()) for w in sentence.text.split()]
    target, follow = tokenize(word), tokenize(after)
    return any(here == target and stems[index + 1 : index + 2] != [follow] for index, here in enumerate(stems))
