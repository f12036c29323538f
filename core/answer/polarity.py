"""Yes or no from the polarity of the evidence: a passage that states the question, one that denies
it, or none (cannot tell). Rules of thumb are listed in docs/decisions.md under "Answer forms"."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.answer.claim_alignment import (
    Alignment,
    AskedClaim,
    Decision,
    Polarity,
    aligned,
    asked_claim,
    observe,
    threshold,
)
from core.answer.denials import CLAUSE_BREAK, denied_otherwise, denies, opposed, refused, replaced, unrealised
from core.answer.passages import Evidence, Sentence, covered, passage
from core.answer.support import unnamed_agents
from core.answer.term_coverage import coverage
from core.nlp import lexicon_or_none
from core.nlp.cardinals import cardinal_value
from core.nlp.tagging import Token, tag_text
from core.question import Question
from core.question.terms import EDGE, Term
from core.text.tokenizer import tokenize
from core.text.words import (
    BE_FORMS,
    DENIALS,
    LIGHT_VERBS,
    PAST_AUXILIARIES,
    POSSESSIVES,
    UNASSERTED_CLAUSE_OPENERS,
)
from core.units import Role

# Words after a negation within which the word it governs stands ("did not at first agree").
_NEGATION_REACH = 4
# What a negation governs: a verb, an adjective, a noun ("never a member"), a copula's complement.
_GOVERNED_TAGS = frozenset(("VERB", "ADJ", "NOUN", "PROPN", "NUM", "AUX"))
# What may stand between a verb and its object: a particle ("make out"), a determiner, a possessive.
_OBJECT_LEADERS = frozenset(("ADP", "PART", "DET", "PRON", "ADJ", "NUM"))
# A sentence answering a question explicitly: "No." or "Yes, parking is free …".
_REPLY = re.compile(r"^\s*(?P<word>yes|no)\b\s*(?:[.,;:!\u2013\u2014-]+\s*|$)", re.IGNORECASE)
# Sentences after a bare "No." quoted as its reason, at most.
_REPLY_REASONS = 2


@dataclass(frozen=True)
class Verdict:
    """Yes, No, or None (cannot tell), with the sentences that decided it, and the aligned
    decision (its confidence and reason) where the question's claim could be read."""

    answer: str | None
    because: tuple[Sentence, ...]
    decision: Decision | None = None


def yes_no(asked: Question, evidence: Evidence) -> Verdict:
    """Yes when a passage states every term (as written, inflected, or through a lexicon link of
    the same lemma or a derivation: "see" / "saw") and no such passage denies it; No when one
    does, a negation word sharing a clause with a question term or the opposite of a question
    word said of another ("open … on Sundays" / "closed on Sundays"); otherwise cannot tell,
    quoting the closest passage. Co-mention alone is weak support, so one denial outweighs any
    number of statements ("asked the priory to pay" / "the priory refused"). A question about
    what happened ("Was …?", "Did …?") is not answered from a procedure's steps."""
    reply = _reply(asked.terms, evidence)
    if reply is not None:
        return reply
    claim = asked_claim(asked)
    if claim is None:
        return _stated(asked, evidence)
    decision = decide(asked, claim, evidence)
    if decision.polarity is Polarity.OPEN:
        # No one sentence settles it: a passage stating every term (or denying one) still may,
        # as in "The message was delivered" after the sentence naming the on-call phone.
        stated = _stated(asked, evidence, claim)
        if stated.answer is not None:
            return stated
    return Verdict(None if decision.polarity is Polarity.OPEN else decision.polarity.value, decision.because, decision)


def decide(asked: Question, claim: AskedClaim, evidence: Evidence) -> Decision:
    """The decision of the most confident sentence that decides at all, when it reaches the
    learned threshold; else cannot tell, with the closest sentence and why."""
    # A step says what to do, not what was done: "Re-enable automatic renewal" does not answer
    # "Was the certificate renewed automatically?" either way.
    happened = _asks_what_happened(asked.text)
    alignments = [
        a for a in aligned(claim, asked, evidence) if not (happened and a.sentence.unit.role is Role.PROCEDURE)
    ]
    decisions = [read(asked, claim, alignment, evidence) for alignment in alignments]
    observe(asked.text, decisions)
    needed = threshold()
    for decision in decisions:
        if decision.polarity is not Polarity.OPEN and decision.confidence >= needed:
            return decision
    if not decisions:
        return Decision(Polarity.OPEN, 0.0, (), f"no evidence sentence to align with ({claim.describe()})")
    closest = decisions[0]
    said = f"the closest sentence aligns {closest.confidence:.2f}, below {needed:.2f}: {closest.reason}"
    return Decision(
        Polarity.OPEN,
        closest.confidence,
        closest.because,
        said if closest.polarity is not Polarity.OPEN else closest.reason,
    )


def read(asked: Question, claim: AskedClaim, alignment: Alignment, evidence: Evidence) -> Decision:
    """What one aligned sentence says of the claim. Every predicate term said: No when a clause
    saying them denies it (a negation word, "no" before the thing asked, an antonym or another
    word in an asked word's place) or only offers it and a later sentence refuses; Yes when it
    is stated, its head said and its names and numbers too. One term short: No when another
    word, number or the opposite stands in its place. Otherwise cannot tell."""
    question, sentence, predicate = asked.text, alignment.sentence, claim.predicate
    window = tuple(passage(sentence, (*claim.subject, *predicate), evidence))
    confidence, how = alignment.confidence, alignment.describe()
    missing = [t.word for t in predicate if t.word not in alignment.said]
    if not missing:
        if _negated(sentence, predicate, question) or denied_otherwise(sentence, predicate, question, window):
            return Decision(Polarity.NO, confidence, window, f"it denies {claim.describe()} ({how})")
        frame = unrealised(sentence, predicate, question)
        if frame is not None:
            refusal = refused(sentence, frame, evidence)
            if refusal is not None:
                return Decision(Polarity.NO, confidence, (*window, refusal), f"{frame!r} was refused ({how})")
            return Decision(Polarity.OPEN, confidence, window, f"it is only {frame!r}, not done ({how})")
    if len(missing) == 1 and len(predicate) > 1:
        if replaced(sentence, predicate, question, window) or opposed(sentence, predicate):
            return Decision(Polarity.NO, confidence, window, f"another word stands where it asks {missing[0]} ({how})")
        if _other_number(claim, sentence):
            return Decision(Polarity.NO, confidence, window, f"it gives another number than {missing[0]} ({how})")
    exact = [t for t in predicate if t.is_name or _number(t)]
    # The question's verb is what it claims: a sentence that does not say it ("did not find any
    # fault in the backup generator" asked "Did the backup generator fail?") states no Yes.
    verbs = _asked_verbs(asked, claim)
    unsaid_verb = any(t.found_in(verbs) and (t.word in missing or _only_nominal(sentence, t)) for t in predicate)
    # Nor does one leaving out how it held ("eager to ride" asked "Could the boy ride alone?").
    unsaid_manner = claim.manner is not None and claim.manner.word in missing
    if alignment.head_said and not (unsaid_verb or unsaid_manner) and not [t for t in exact if t.word in missing]:
        # A sentence that denies a word it was asked ("the lock did not need force") states no Yes.
        if _negated(sentence, predicate, question):
            return Decision(Polarity.NO, confidence, window, f"it denies {claim.describe()} ({how})")
        if _unasserted(sentence, (claim.head,)):
            return Decision(Polarity.OPEN, confidence, window, f"it only asks whether {claim.head.word!r} ({how})")
        return Decision(Polarity.YES, confidence, window, f"it states {claim.describe()} ({how})")
    unmatched = ", ".join(missing) or "none"
    return Decision(
        Polarity.OPEN, confidence, window, f"it does not state {claim.head.word!r} (unmatched: {unmatched}; {how})"
    )


def _verb(token: Token) -> bool:
    """A verb as tagged, or a word the lexicon knows only as a verb ("fail", which the tagger may
    call a noun after "the backup generator")."""
    if token.tag == "VERB":
        return True
    lexicon = lexicon_or_none()
    return lexicon is not None and lexicon.parts_of_speech(token.word.lower()) == frozenset("v")


def _negated(sentence: Sentence, predicate: Sequence[Term], question: str) -> bool:
    """A negation that governs a predicate word: the first content word after it ("did not
    *have* a sister", "won't *stop*"), through a light verb to its complement ("was not
    *happy*", "did not have a *sister*") and through "to" to the verb it frames ("did not need
    to *force* the lock", "refused to *charter*"). "Crying and won't stop" denies the stopping,
    not the sister the question asks about."""
    asked = {w.strip(EDGE).lower() for w in question.split()}
    tokens = tag_text(sentence.text)
    for index, token in enumerate(tokens):
        word = token.word.lower()
        if word in asked or not (word in DENIALS or word.endswith("n't")):
            continue
        targets = _governed(tokens, index + 1)
        # A passive's subject is what it is done to: "cockerels are not allowed" denies keeping
        # cockerels; an active verb's is its doer ("her sister won't stop" denies no sister).
        passive = index > 1 and tokens[index - 1].word.lower() in BE_FORMS and targets[:1] and targets[0].tag == "VERB"
        if passive:
            targets.append(tokens[index - 2])
        for target in targets:
            if any(term.found_in(set(tokenize(target.word))) for term in predicate):
                return True
    return False


def _governed(tokens: Sequence[Token], start: int) -> list[Token]:
    """The words a negation before `start` governs: its first content word within reach, on
    through a light verb to its complement and through "to" to the verb it frames."""
    governed: list[Token] = []
    at = reach_from = start
    while at < len(tokens) and at - reach_from < _NEGATION_REACH:
        token = tokens[at]
        if token.tag not in _GOVERNED_TAGS:
            at += 1
            continue
        governed.append(token)
        if token.word.lower() in LIGHT_VERBS:
            at = reach_from = at + 1
        elif at + 2 < len(tokens) and tokens[at + 1].word.lower() == "to":
            at = reach_from = at + 2
        else:
            if token.tag == "VERB":  # a denied verb denies it of its object too ("could not make out his face")
                governed.extend(_object_of(tokens, at + 1))
            break
    return governed


def _object_of(tokens: Sequence[Token], start: int) -> list[Token]:
    """The noun a verb takes as its object: past its particle, determiner or possessive, within
    reach and before the clause ends; none when something else comes first."""
    for token in tokens[start : start + _NEGATION_REACH]:
        if token.tag in ("NOUN", "PROPN"):
            return [token]
        if token.tag not in _OBJECT_LEADERS:
            return []
    return []


def _asked_verbs(asked: Question, claim: AskedClaim | None) -> set[str]:
    """The stems of the question's verbs; after a form of "do", its claim's head is one ("Did the
    pump work?", "work" tagged a noun)."""
    verbs = set(tokenize(" ".join(t.word for t in asked.tokens if _verb(t))))
    return verbs | set(claim.head.stems) if claim is not None and claim.head_is_verb else verbs


def _only_nominal(sentence: Sentence, verb: Term) -> bool:
    """Whether the sentence says an asked verb only as a noun, after a determiner or possessive
    ("Did it work?" / "their work was nullified"): it names the thing, it does not say it was done."""
    tokens = tag_text(sentence.text)
    places = [i for i, t in enumerate(tokens) if verb.found_in(set(tokenize(t.word)))]
    return bool(places) and all(
        i > 0 and tokens[i].tag == "NOUN" and (tokens[i - 1].tag == "DET" or tokens[i - 1].word.lower() in POSSESSIVES)
        for i in places
    )


def _unasserted(sentence: Sentence, terms: Sequence[Term]) -> bool:
    """Whether the sentence says one of the terms only in a clause it does not assert, one
    opened by "whether" or "if" ("It was unclear whether Nowsch had an attorney")."""
    return any(_only_unasserted(sentence, term) for term in terms)


def _only_unasserted(sentence: Sentence, term: Term) -> bool:
    places = 0
    for clause in CLAUSE_BREAK.split(sentence.text):
        opened = False
        for word in clause.split():
            bare = word.strip(EDGE).lower()
            opened = opened or bare in UNASSERTED_CLAUSE_OPENERS
            if term.found_in(set(tokenize(bare))):
                if not opened:
                    return False
                places += 1
    return places > 0


def _other_number(claim: AskedClaim, sentence: Sentence) -> bool:
    """A number asked ("five years") and another in the sentence that says the rest ("two years")."""
    asked = [t for t in claim.predicate if _number(t) and t not in covered([t], [sentence])]
    return bool(asked) and any(t.tag == "NUM" for t in tag_text(sentence.text))


def _stated(asked: Question, evidence: Evidence, claim: AskedClaim | None = None) -> Verdict:
    """A question whose subject and predicate cannot be told apart: a passage stating every term."""
    question, terms = asked.text, asked.terms
    passages = []
    for rank, sentence in enumerate(evidence.ranked()):
        # A question in the evidence asks, it states nothing ("Is parking free? Yes, …").
        if covered(terms, [sentence]) and not _is_question(sentence):
            window = tuple(passage(sentence, terms, evidence))
            passages.append((_said(asked, terms, window, sentence), -len(window), rank, window, sentence))
    passages.sort(key=lambda p: (-p[0], -p[1], p[2]))
    happened = _asks_what_happened(question)
    # A step says what to do, not what was done: "Re-enable automatic renewal" does not answer
    # "Was the certificate renewed automatically?" either way.
    said = [p for p in passages if terms and not (happened and p[4].unit.role is Role.PROCEDURE)]
    asserted, verbs = [], _asked_verbs(asked, claim)
    for _, _, _, window, sentence in (p for p in said if p[0] == len(terms)):
        # "She did not need to force the lock" denies whatever it frames.
        if denies(sentence, terms, question, window):
            return Verdict("No", window)
        frame = unrealised(sentence, terms, question)
        if frame is None:
            nominal = any(t.found_in(verbs) and _only_nominal(sentence, t) for t in terms)
            if not (nominal or _unasserted(sentence, terms)):
                asserted.append(window)
            continue
        refusal = refused(sentence, frame, evidence)
        if refusal is not None:
            return Verdict("No", (*window, refusal))
    # One term short, a passage cannot say yes; it says no when it puts another word in that
    # term's place ("a poor fit" asked "a good fit") or its opposite. A plain "not" there may deny
    # another verb ("did not sail" asked "did it sink?"), so it does not count.
    for _, _, _, window, sentence in (p for p in said if len(terms) > 1 and p[0] == len(terms) - 1):
        if replaced(sentence, terms, question, window) or opposed(sentence, terms):
            return Verdict("No", window)
    if asserted:
        return Verdict("Yes", asserted[0])
    stated = [p for p in passages if terms and p[0] == len(terms)]
    return Verdict(None, (stated or passages)[0][3] if passages else ())


def _said(question: Question, terms: Sequence[Term], window: Sequence[Sentence], sentence: Sentence) -> int:
    """How many terms the passage says. A term its words miss may be said through the lexicon
    (an irregular form the stemmer cannot join: "see" / "saw", "die" / "death"), or be the
    subject of the question's verb that the sentence states in the passive without "by" ("Can a
    customer return unworn footwear?" / "Unworn footwear may be returned …": the support check's
    rule, core/answer/support.py), looked up only for a passage one term short. A number is said by the
    sentence itself, never by the sentence before it: no pronoun carries one ("open from nine …"
    does not say how many books)."""
    found = covered(terms, window)
    count = len(found)
    if count == len(terms) - 1:
        words = [w for s in window for w in s.text.split()]
        unsaid = [t for t in terms if t not in found]
        linked = len(coverage(unsaid, words).covered)
        agents = unnamed_agents(question.tokens, tag_text(sentence.text), [t for t in unsaid if not t.is_name])
        count += linked or len(agents)
    numbers = [t for t in terms if _number(t)]
    if numbers and len(covered(numbers, [sentence])) < len(numbers):
        count = min(count, len(terms) - 1)
    return count


def _number(term: Term) -> bool:
    return any(ch.isdigit() for ch in term.word) or (term.word != "one" and cardinal_value(term.word) is not None)


def _is_question(sentence: Sentence) -> bool:
    return sentence.text.rstrip(EDGE.replace("?", "") + " ").endswith("?")


def _reply(terms: Sequence[Term], evidence: Evidence) -> Verdict | None:
    """The evidence's own "Yes"/"No" to the same question: a sentence opening with the word, in
    an FAQ entry whose topic is the question or right after the question asked in the text. Its
    reason is the rest of that sentence, or the sentences after a bare "No." (never the answer
    word again: "No, because: No." explains nothing)."""
    if not terms:
        return None
    for sentence in evidence.ranked():
        opened = _REPLY.match(sentence.text)
        if opened is None:
            continue
        earlier, later = evidence.around(sentence, 1, _REPLY_REASONS)
        asked = [s for s in earlier[-1:] if _is_question(s)]
        if sentence.unit.topic.rstrip().endswith("?"):
            asked.append(Sentence(sentence.unit.topic, sentence.unit, frozenset(tokenize(sentence.unit.topic))))
        # The text's verdict is on its own question: every term of ours must be in it.
        if not any(len(covered(terms, [question])) == len(terms) for question in asked):
            continue
        rest = sentence.text[opened.end() :].strip()
        if rest:
            because: tuple[Sentence, ...] = (Sentence(rest, sentence.unit, sentence.stems),)
        else:
            exchange = f"{asked[-1].text} {sentence.text}"
            because = tuple(s for s in later if s.unit.id == sentence.unit.id and not _is_question(s)) or (
                Sentence(exchange, sentence.unit, sentence.stems),
            )
        return Verdict(opened.group("word").capitalize(), because)
    return None


def _asks_what_happened(question: str) -> bool:
    """A question opening with a past auxiliary ("Was …", "Did …") asks about an event."""
    words = question.split(maxsplit=1)
    return bool(words) and words[0].strip(EDGE).lower() in PAST_AUXILIARIES
