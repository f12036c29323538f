"""The kept sentences a short answer reads (core/answer/short_answer.py), each with the focus
terms it says: as written, with its references' antecedents ("He", "the company",
core/answer/coref.py), the question an FAQ entry answers, and for a passive naming its agent the
sentence it continues. Tagging is the costly part, so a sentence is tagged only when its rank
needs it or it is tried.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.answer.coref import Resolution, mentions_reference, resolve
from core.answer.passages import Evidence, Sentence, covered
from core.answer.term_coverage import coverage
from core.nlp.tagging import Token, tag_text
from core.question.terms import Term
from core.text.tokenizer import tokenize
from core.text.words import BE_FORMS

# Sentences read (in rank order) for the one that best covers the question, at most.
MAX_SENTENCES = 40
# Words of a sentence read for a short answer, at most: a budget. A paste that lost its full stops
# is one "sentence" of a whole file, whose tagging and resolving took seconds a question; it is
# left unread, and `short_draft` names the budget when no sentence within it is left.
MAX_SENTENCE_WORDS = 1_000
# Sentences before the cited one read for a reference's antecedent (the same unit or the one before).
CONTEXT_BEFORE = 2


@dataclass(frozen=True)
class Reading:
    """A passage sentence read for answering: its tokens, resolved references, coverage and rank."""

    sentence: Sentence
    tokens: tuple[Token, ...]
    resolved: dict[int, Resolution]
    covered: int
    rank: int
    # The sentence before, when this one continues it (`continued_from`): said here too.
    context: tuple[str, ...] = ()


def ranked_readings(terms: Sequence[Term], evidence: Evidence, kept: set[str], agent: bool = False) -> list[Reading]:
    """The kept sentences by coverage, then rank. Only a sentence with a reference in it ("He",
    "the company") is tagged to rank it, since its antecedent may say a term; the rest are ranked
    by their words and tagged when tried (`read`): tagging all 40 cost more than retrieval."""
    readings = []
    for rank, sentence in enumerate(s for s in evidence.ranked() if s.unit.id in kept):
        if rank >= MAX_SENTENCES:
            break
        if over_budget(sentence):
            continue
        if mentions_reference(sentence.text) or (agent and _may_name_agent(sentence.text)):
            readings.append(_ranked(sentence, evidence, terms, rank, agent))
        else:
            readings.append(Reading(sentence, (), {}, len(covered(terms, [sentence])), rank))
    readings.sort(key=lambda r: (-r.covered, r.rank))
    return readings


def over_budget(sentence: Sentence) -> bool:
    """Whether the sentence has more words than a short answer reads (MAX_SENTENCE_WORDS)."""
    return len(sentence.text.split(maxsplit=MAX_SENTENCE_WORDS)) > MAX_SENTENCE_WORDS


def _ranked(sentence: Sentence, evidence: Evidence, terms: Sequence[Term], rank: int, agent: bool) -> Reading:
    """A sentence with a reference, ranked as `read` ranks it. Antecedents only add words, so a
    sentence that says every term itself covers them all either way: it is ranked untagged and
    read (its references resolved, it and the sentences before it chunked) only if it is tried."""
    own = len(
        coverage(terms, [t.word for t in tag_text(sentence.text)] + said_with(sentence, {}), linked=False).covered
    )
    if own == len(terms):
        return Reading(sentence, (), {}, own, rank)
    return read(sentence, evidence, terms, rank, agent)


def read(sentence: Sentence, evidence: Evidence, terms: Sequence[Term], rank: int, agent: bool = False) -> Reading:
    """The sentence tagged, its references resolved, and the terms it covers with them; asked
    who (`agent`), with the sentence it continues (`continued_from`)."""
    tokens = tag_text(sentence.text)
    earlier, _ = evidence.around(sentence, CONTEXT_BEFORE, 0)
    resolved = resolve(tokens, sentence.text, [s.text for s in earlier])
    context = continued_from(tokens, earlier) if agent else ()
    words = [t.word for t in tokens] + said_with(sentence, resolved) + list(context)
    return Reading(sentence, tokens, resolved, len(coverage(terms, words, linked=False).covered), rank, context)


def _may_name_agent(text: str) -> bool:
    """Whether the sentence may be a passive naming its agent (checked on words, before tagging)."""
    words = {w.strip(".,;:!?\"'()").lower() for w in text.split()}
    return "by" in words and bool(words & BE_FORMS)


def continued_from(tokens: Sequence[Token], earlier: Sequence[Sentence]) -> tuple[str, ...]:
    """The sentence before, when this one is a passive naming its agent whose subject is a noun
    that sentence names: "Every new member gets a mentor. Mentors are assigned by the education
    officer, Tom Harcourt." What the first says of mentors counts as said by the second, so its
    agent answers "Who assigns the mentors for new members?". Read only asked who: the sentence's
    subject is no agent ("Ctenophores are distinguished … by having colloblasts" must not borrow
    "sponges" from the sentence before to answer "What distinguishes sponges …?")."""
    if not earlier:
        return ()
    be = next((i for i, t in enumerate(tokens) if t.word.lower() in BE_FORMS), None)
    if not be or tokens[be - 1].tag != "NOUN" or any(t.tag == "VERB" for t in tokens[:be]):
        return ()
    verb = next((i for i in range(be + 1, len(tokens)) if tokens[i].tag != "ADV"), None)
    if verb is None or tokens[verb].tag != "VERB" or not any(t.word.lower() == "by" for t in tokens[verb + 1 :]):
        return ()
    previous = earlier[-1]
    return (previous.text,) if set(tokenize(tokens[be - 1].word)) & previous.stems else ()


def opens_with_reference(sentence: Sentence) -> bool:
    words = sentence.text.split()
    return bool(words) and mentions_reference(words[0])


def said_with(sentence: Sentence, resolved: dict[int, Resolution]) -> list[str]:
    """Words a sentence says without writing them: its references' antecedents, and the question
    an FAQ entry answers (its topic ends in "?"): "Report it to the warden" is about a broken gate."""
    asked = sentence.unit.topic.split() if sentence.unit.topic.rstrip().endswith("?") else []
    return [r.antecedent for r in resolved.values()] + asked


def antecedent_words(reading: Reading) -> list[str]:
    return said_with(reading.sentence, reading.resolved) + list(reading.context)
