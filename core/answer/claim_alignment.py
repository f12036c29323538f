"""The claim a yes/no question asks, its subject and its predicate, aligned with the evidence's
sentences: the sentence that answers "Does Jenny have a sister?" is one saying Jenny's sister
("But her baby sister is crying", her = Jenny named just before), not one that merely shares a
word with it.

The question's words are split at its auxiliary: the noun phrase or pronoun after it is the
subject, the content words after that the predicate ("Does | Jenny | have a sister?"). A light
verb (be, have, do, get) states no predicate of its own, so only its complement must be said. A
sentence aligns by how it says the subject (by name, by a pronoun whose referent was named just
before, or not at all) and by the share of the predicate it says; the product is its confidence.
The threshold a sentence must reach to answer is learned by scripts/learn_yes_no.py on half the
CoQA development conversations (data/yes_no_threshold.json), so an unrelated sentence leaves
the question open with the reason. What the aligned sentence says (stated, denied, another value
in the predicate's place) is read by core/answer/polarity.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, Field

from core.answer.passages import Evidence, Sentence, covered
from core.answer.support import unnamed_agents
from core.answer.term_coverage import coverage
from core.nlp import lexicon_or_none
from core.nlp.chunk import noun_phrases
from core.nlp.tagging import Token, tag_text
from core.question import Question
from core.question.terms import EDGE, Term, inflected_stems
from core.text.tokenizer import tokenize
from core.text.words import (
    DO_FORMS,
    LIGHT_VERBS,
    NEUTER_PRONOUNS,
    PERSONAL_PRONOUNS,
    PLURAL_PRONOUNS,
    POSSESSIVES,
    QUESTION_TYPE_AUXILIARIES,
    WH_WORDS,
)

# Words a yes/no question may open with before its auxiliary ("And did she …", "So, was it …").
_OPENER_TAGS = frozenset(("CCONJ", "INTJ", "PUNCT", "ADV"))
_OPENER_REACH = 3
# Sentences before a sentence whose pronoun may refer to the subject named there.
_REFERENT_REACH = 2
# Sentences a chain of pronouns may carry a name along, at most (budget).
_CHAIN_REACH = 5
_REFERRING = PERSONAL_PRONOUNS | PLURAL_PRONOUNS | NEUTER_PRONOUNS
_CONTENT_TAGS = frozenset(("NOUN", "PROPN", "VERB", "ADJ", "NUM"))
# A subject said by name counts whole; through a pronoun after the sentence that named it, less
# (the pronoun might refer to another); a question whose own subject is a pronoun nobody
# resolved, less again (any sentence's subject might be meant); an unsaid subject, least.
SUBJECT_NAMED = 1.0
SUBJECT_REFERRED = 0.75
SUBJECT_UNRESOLVED = 0.5
SUBJECT_UNSAID = 0.25
_THRESHOLD_FILE = Path(__file__).parent / "data" / "yes_no_threshold.json"


class Polarity(Enum):
    YES = "Yes"
    NO = "No"
    OPEN = "cannot tell"


@dataclass(frozen=True)
class AskedClaim:
    """What a yes/no question asks to be stated: `subject` terms (empty when the subject is a
    pronoun, `pronoun`, or the expletive "there") and `predicate` terms, with the predicate's
    `head` (its first word: the main verb, or the complement's first word) that a Yes needs said."""

    subject: tuple[Term, ...]
    pronoun: str | None
    predicate: tuple[Term, ...]
    head: Term
    # An adverb ending the question, saying how the predicate holds ("ride *alone*"): a Yes needs it.
    manner: Term | None = None
    # After a form of "do" the word after the subject is the main verb, whatever its tag ("Did
    # the pump work?"): whether the head is that word (not a light verb's complement).
    head_is_verb: bool = False

    def describe(self) -> str:
        subject = " ".join(t.word for t in self.subject) or self.pronoun or "(none)"
        return f"subject {subject!r}, predicate {' '.join(t.word for t in self.predicate)!r}"


@dataclass(frozen=True)
class Alignment:
    """How one sentence says the asked claim: `subject` (one of the SUBJECT_* weights),
    `predicate` (the share of predicate terms said), whether the head is said, and the
    confidence (their product)."""

    sentence: Sentence
    subject: float
    predicate: float
    head_said: bool
    # The predicate terms' words the sentence says.
    said: frozenset[str] = frozenset()

    @property
    def confidence(self) -> float:
        return self.subject * self.predicate

    def describe(self) -> str:
        return f"subject {self.subject:.2f} x predicate {self.predicate:.2f} = {self.confidence:.2f}"


@dataclass(frozen=True)
class Decision:
    """The typed yes/no decision: its polarity, confidence, the sentences it rests on and why."""

    polarity: Polarity
    confidence: float
    because: tuple[Sentence, ...]
    reason: str


class YesNoThreshold(BaseModel):
    """The learned threshold (scripts/learn_yes_no.py) and how it was learned."""

    threshold: float = Field(ge=0.0, le=1.0)
    learned_on: str = ""


@lru_cache(maxsize=1)
def threshold() -> float:
    """The confidence an aligned sentence needs to answer yes or no."""
    return YesNoThreshold.model_validate(json.loads(_THRESHOLD_FILE.read_text(encoding="utf-8"))).threshold


def asked_claim(question: Question) -> AskedClaim | None:
    """The subject and predicate of a question opening with an auxiliary, or None (a question of
    another shape, or one whose predicate names nothing to look for)."""
    # The claim is the first question's: "Answer Yes or No." after it asks nothing.
    ends = [i for i, t in enumerate(question.tokens) if t.word == "?"]
    tokens = question.tokens[: ends[0] + 1] if ends else question.tokens
    at = _auxiliary(tokens)
    if at is None:
        return None
    pronoun, start = None, at + 1
    if start < len(tokens) and tokens[start].tag == "PRON":
        pronoun, start = tokens[start].word.lower(), start + 1
    # "some of the works": a quantifier's subject is the phrase after "of".
    if (
        start + 1 < len(tokens)
        and tokens[start].tag in ("DET", "PRON", "NUM")
        and tokens[start + 1].word.lower() == "of"
    ):
        pronoun, start = None, start + 2
    spans = [span for span in noun_phrases([(t.word, t.tag) for t in tokens]) if span[0] == start]
    # "her family": a possessive before a noun phrase is part of the subject, not all of it.
    if spans and (pronoun is None or pronoun in POSSESSIVES):
        subject_end = _subject_end(tokens, spans[0], tokens[at].word.lower())
    elif pronoun is None and start + 1 < len(tokens) and tokens[start].tag == "DET":
        # A determiner opens a noun phrase whatever the tagger calls the next word ("Did the
        # ferry win …", "ferry" tagged a verb): the word after it, and nouns after that.
        subject_end = start + 2
        while subject_end < len(tokens) and tokens[subject_end].tag in ("NOUN", "PROPN"):
            subject_end += 1
    else:
        subject_end = start
    subject_words = {t.word.strip(EDGE).lower() for t in tokens[start:subject_end]}
    final = _final_adverb(tokens[subject_end:])
    predicate_tokens = [
        t for t in tokens[subject_end:] if (t.tag in _CONTENT_TAGS or t is final) and t.word.lower() not in LIGHT_VERBS
    ]
    predicate_words = {t.word.strip(EDGE).lower() for t in predicate_tokens}
    subject = _terms(question, subject_words, ())
    predicate = _terms(question, predicate_words, subject)
    if not predicate:
        return None
    # The word right after the subject is the main verb or the complement's first word.
    head_word = predicate_tokens[0].word.strip(EDGE).lower()
    head = next((t for t in predicate if head_word in _words_of(t)), predicate[-1])
    # Nothing named before the predicate: a subject no sentence can be checked against.
    unnamed = None if subject else (pronoun or ("there" if tokens[at + 1].word.lower() == "there" else "(unnamed)"))
    manner_word = final.word.strip(EDGE).lower() if final is not None else ""
    manner = next((t for t in predicate if manner_word in _words_of(t)), None)
    after = [t for t in tokens[subject_end:] if t.tag != "ADV"]
    head_is_verb = tokens[at].word.lower() in DO_FORMS and bool(after) and after[0] is predicate_tokens[0]
    return AskedClaim(subject, unnamed, predicate, head, manner, head_is_verb)


def _final_adverb(predicate: Sequence[Token]) -> Token | None:
    """An adverb ending the question says how the predicate holds ("Could he ride *alone*?", "Was
    someone in the morning room *alone*?"): the claim is about it, and a sentence saying the rest
    does not state it. Not the particle of a phrasal verb the lexicon knows ("get along"), and
    not an adverb before the verb, mostly emphasis ("did he ever …", "was it really …")."""
    words = [t for t in predicate if t.tag != "PUNCT"]
    if len(words) < 2 or words[-1].tag != "ADV":
        return None
    lexicon = lexicon_or_none()
    phrasal = f"{words[-2].word} {words[-1].word}".lower()
    return None if lexicon is not None and "v" in lexicon.parts_of_speech(phrasal) else words[-1]


def _auxiliary(tokens: Sequence[Token]) -> int | None:
    for index, token in enumerate(tokens[: _OPENER_REACH + 1]):
        if token.tag == "AUX" or token.word.lower() in QUESTION_TYPE_AUXILIARIES:
            return index
        if token.tag not in _OPENER_TAGS or token.word.lower() in WH_WORDS:
            return None
    return None


def _subject_end(tokens: Sequence[Token], span: tuple[int, int], auxiliary: str) -> int:
    """Where the subject's noun phrase ends. After a fronted auxiliary the tagger often calls the
    predicate a noun ("was the group chatty", "did the section travel with …", "do follicles
    produce wool"). A do-question has a main verb: with none after the phrase, it is the
    phrase's last noun WordNet has as a verb (not the question's last word, its object).
    Otherwise a phrase running to the question's end leaves nothing to ask: the subject is its
    first noun, with the rest of a name ("Robin Williams")."""
    start, end = span
    after = any(t.tag in _CONTENT_TAGS for t in tokens[end:])
    nouns = [i for i in range(start, end) if tokens[i].tag in ("NOUN", "PROPN")]
    if auxiliary in DO_FORMS and not any(t.tag == "VERB" for t in tokens[end:]):
        verbs = [i for i in nouns[1:] if (after or i < end - 1) and _can_be_verb(tokens[i].word)]
        if verbs:
            return verbs[-1]
    if after or not nouns:
        return end
    first = last = nouns[0]
    while tokens[first].tag == "PROPN" and last + 1 < end - 1 and tokens[last + 1].tag == "PROPN":
        last += 1
    return last + 1


def _can_be_verb(word: str) -> bool:
    lexicon = lexicon_or_none()
    return lexicon is not None and "v" in lexicon.parts_of_speech(word.lower())


def _terms(question: Question, words: set[str], taken: Sequence[Term]) -> tuple[Term, ...]:
    """The question's terms among `words`, and a term for each other content word: the planner's
    focus words leave out some a claim needs ("Does it have another *name*?")."""
    terms = [t for t in question.terms if _words_of(t) & words and t not in taken]
    named = {w for t in (*terms, *taken) for w in _words_of(t)}
    for word in sorted(words - named, key=question.text.lower().find):
        stems = tuple(tokenize(word))
        if stems:
            terms.append(Term(word, stems, False, inflected_stems(word) if len(stems) == 1 else frozenset()))
    return tuple(terms)


def _words_of(term: Term) -> set[str]:
    return {w.lower() for w in term.word.split()}


def align(claim: AskedClaim, question: Question, sentence: Sentence, evidence: Evidence) -> Alignment:
    words = [w.strip(EDGE) for w in sentence.text.split()]
    said = covered(claim.predicate, [sentence])
    unsaid = [t for t in claim.predicate if t not in said]
    # An irregular form the stemmer cannot join is said through the lexicon ("see" / "saw").
    linked = set(coverage(unsaid, words).covered) if unsaid else set()
    rest = [t for t in unsaid if t.word not in linked]
    said_words = {t.word for t in said} | linked | _referred(rest, sentence, evidence)
    share = len(said_words) / len(claim.predicate)
    subject = _subject_weight(claim, question, sentence, evidence)
    return Alignment(sentence, subject, share, claim.head.word in said_words, frozenset(said_words))


def _referred(unsaid: Sequence[Term], sentence: Sentence, evidence: Evidence) -> set[str]:
    """The names a sentence saying the rest of the predicate says by pronouns, the sentences
    before naming them: "Did she give Nowsch money?" (memory put the name for "him") is
    answered by "… tried to help Nowsch. She fed him, she gave him money.", as a subject is
    (`_subject_weight`). Only then: a pronoun in a sentence saying little else of the claim
    ("When he reached the beach") would outrank the sentence that names it."""
    if not unsaid or not all(t.is_name for t in unsaid) or len(unsaid) > _referring(sentence):
        return set()
    named = covered(unsaid, _chain(sentence, evidence))
    return {t.word for t in named} if len(named) == len(unsaid) else set()


def _referring(sentence: Sentence) -> int:
    return sum(t.tag == "PRON" and t.word.lower() in _REFERRING for t in tag_text(sentence.text))


def _chain(sentence: Sentence, evidence: Evidence) -> list[Sentence]:
    """The sentences a pronoun of `sentence` may refer back into: the few just before it, and
    on while each earlier one refers by a pronoun too, so a name carries along a chain of
    them ("… tried to help Nowsch. 'She was really good to him. She fed him …'")."""
    earlier, _ = evidence.around(sentence, _CHAIN_REACH, 0)
    kept = earlier[-_REFERENT_REACH:]
    for before in reversed(earlier[:-_REFERENT_REACH]):
        if not _referring(kept[0]):
            break
        kept.insert(0, before)
    return kept


def _subject_weight(claim: AskedClaim, question: Question, sentence: Sentence, evidence: Evidence) -> float:
    """A subject is named when the sentence says its head ("the full repair" for "the kiln roof
    repair") and the sentence or the few before it say the rest; a passive without "by" leaves
    it unnamed and still says it (core/answer/support.py's rule); a pronoun of the sentence
    refers to it when the sentences just before name it."""
    if not claim.subject:
        return SUBJECT_NAMED if claim.pronoun in (None, "there") else SUBJECT_UNRESOLVED
    earlier, _ = evidence.around(sentence, _REFERENT_REACH, 0)
    if covered(claim.subject[-1:], [sentence]) and len(covered(claim.subject, [*earlier, sentence])) == len(
        claim.subject
    ):
        return SUBJECT_NAMED
    tokens = tag_text(sentence.text)
    if unnamed_agents(question.tokens, tokens, claim.subject):
        return SUBJECT_NAMED
    chain = _chain(sentence, evidence) if _referring(sentence) else []
    if chain and len(covered(claim.subject, chain)) == len(claim.subject):
        return SUBJECT_REFERRED
    return SUBJECT_UNSAID


def aligned(claim: AskedClaim, question: Question, evidence: Evidence) -> list[Alignment]:
    """Every evidence sentence's alignment, most confident first (rank order among equals);
    observers (scripts/learn_yes_no.py) hear them all."""
    found = [align(claim, question, sentence, evidence) for sentence in evidence.ranked()]
    order = sorted(range(len(found)), key=lambda i: (-found[i].confidence, i))
    return [found[i] for i in order]


Observer = Callable[[str, Sequence[Decision]], None]
OBSERVERS: list[Observer] = []


def observe(question: str, decisions: Sequence[Decision]) -> None:
    for observer in OBSERVERS:
        observer(question, decisions)
