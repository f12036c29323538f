"""The role the answer to a who/what/which question plays for the question's main verb, and
whether a lead stands on that side of the verb in a sentence: support.check's direction check
and question_gap.fills_gap's subject slot.

Asked "Who drove X?" the answer is the verb's subject, asked "Who did X drive?" its object, and
asked "In what dynasty did X live?" an adjunct, which is never the verb's subject. The tagger is
trained on written text and often calls the noun after "what" a verb ("What fort did …",
"What harbour guild repainted …"), so the rules below read a wh-phrase by position as much as by
tag, and give no relation where they cannot tell.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from core.nlp.tagging import Token
from core.question.typed_spans import Span
from core.text.tokenizer import tokenize
from core.text.words import AUXILIARIES, BE_FORMS, DO_FORMS, DOER_PREPOSITIONS, RELATIVE_PRONOUNS, WH_ARGUMENTS

# Tags a noun phrase is made of.
PHRASE_TAGS = frozenset(("DET", "ADJ", "NOUN", "PROPN", "NUM"))
# Words between a subject and its verb ("the Court of Justice | has since | taken").
_VERB_GROUP = frozenset(("AUX", "ADV", "PART"))


@dataclass(frozen=True)
class Relation:
    """The role the answer plays for the question's main verb: its subject, its object or an adjunct."""

    role: Literal["subject", "object", "adjunct"]
    verb: Token


def asked_relation(question: Sequence[Token]) -> Relation | None:
    """The answer's role for the question's main verb; None where the question has no
    who/what/which, no verb after it, or a shape these rules do not read. Read once per
    question (`Question.relation`): every lead of every sentence tried asks for it."""
    words = [t.word.lower() for t in question]
    at = next((i for i, w in enumerate(words) if w in WH_ARGUMENTS), None)
    if at is None or at + 1 >= len(question):
        return None
    adjunct = at > 0 and question[at - 1].tag == "ADP"  # "On what date did …?"
    after = _past_phrase(question, words, at + 1)
    # "do" fronts an object question ("Which fort did rebels capture?", whatever the tagger
    # calls "rebels"); "has", "can" and "was" join the verb after them.
    if after < len(question) and words[after] in AUXILIARIES - DO_FORMS:
        verb = _skip(question, after + 1, _VERB_GROUP)
        if verb < len(question) and question[verb].tag == "VERB":
            # "What entity has taken …?" and "could not evade" ask for the subject; "Who was
            # defeated by X?", passive, for what an active sentence puts after its verb.
            role: Literal["subject", "object", "adjunct"] = (
                "adjunct" if adjunct else "object" if words[after] in BE_FORMS else "subject"
            )
            return Relation(role, question[verb])
    aux = after if after < len(question) and words[after] in AUXILIARIES else at + 2
    if aux < len(question) and words[aux] in AUXILIARIES:
        return _fronted(question, words, aux, adjunct)
    if after < len(question) and question[after].tag == "VERB":
        return Relation("adjunct" if adjunct else "subject", question[after])  # "Who claimed that … appeared?"
    return None


def _fronted(question: Sequence[Token], words: Sequence[str], aux: int, adjunct: bool) -> Relation | None:
    """A question whose auxiliary comes before its subject ("Who did the French ask …?"). "did"
    followed by a noun phrase and no verb is the main verb itself ("Who did a morphological
    analysis in 1985 …?"). The gap's verb is the one the question ends on ("… lead many in the
    West to support?"), else the first after the subject ("Who did the French ask to build …?")."""
    rest = _skip(question, aux + 1, PHRASE_TAGS)
    if words[aux] in DO_FORMS and rest < len(question) and question[rest].tag not in ("VERB", "PUNCT") and not adjunct:
        return Relation("subject", question[aux])
    verbs = [i for i in range(aux + 1, len(question)) if question[i].tag == "VERB" and words[i] not in AUXILIARIES]
    if not verbs:
        return None
    end = max((i for i, t in enumerate(question) if t.tag != "PUNCT"), default=0)
    stranded = verbs[-1] == end or (verbs[-1] == end - 1 and question[end].tag == "ADP")
    return Relation("adjunct" if adjunct else "object", question[verbs[-1] if stranded else verbs[0]])


def _past_phrase(question: Sequence[Token], words: Sequence[str], at: int) -> int:
    """The first word after the wh-word's own noun phrase ("What Han Chinese leader |",
    "Which newspaper's parent company |", "What fixed set of factors |")."""
    while at < len(question) and words[at] not in AUXILIARIES:
        token = question[at]
        of_phrase = words[at] == "of" and at + 1 < len(question) and question[at + 1].tag in PHRASE_TAGS
        if not (token.tag in PHRASE_TAGS or words[at] == "'s" or of_phrase or _modifies(question, at)):
            break
        at += 1
    return at


def _modifies(question: Sequence[Token], at: int) -> bool:
    """A word the tagger calls a verb inside a what/which phrase: before a noun or an auxiliary,
    with a verb of its own later ("What harbour guild repainted …?"); "What caused fires?" has
    no later verb and keeps it."""
    if question[at].tag != "VERB" or at + 1 >= len(question) or question[at + 1].tag not in ("NOUN", "PROPN", "AUX"):
        return False
    return any(t.tag == "VERB" or t.word.lower() in AUXILIARIES for t in question[at + 2 :])


def _skip(tokens: Sequence[Token], at: int, tags: frozenset[str]) -> int:
    while at < len(tokens) and tokens[at].tag in tags:
        at += 1
    return at


def _verb_position(sentence: Sequence[Token], verb: Token) -> int | None:
    stems = set(tokenize(verb.word))
    if not stems:
        return None
    return next((i for i, t in enumerate(sentence) if set(tokenize(t.word)) & stems), None)


def _before_verb(sentence: Sequence[Token], last: int, position: int) -> bool:
    """The phrase ending at `last` is the verb's subject: only the rest of its noun phrase,
    auxiliaries, adverbs or a relative pronoun stand between them ("a Tarne | man who | lived")."""
    at = _skip(sentence, last + 1, PHRASE_TAGS)
    while at < position and (sentence[at].tag in _VERB_GROUP or sentence[at].word.lower() in RELATIVE_PRONOUNS):
        at += 1
    return at == position


def reversed_relation(relation: Relation | None, sentence: Sequence[Token], lead: Span) -> bool:
    """Whether the lead stands on the wrong side of the question's verb. In an active sentence
    (no "by" or "with" between the verb and the lead, no "be" before the verb; "has taken" is
    active) the subject stands before the verb: asked for the object, a lead there answers the
    reverse question, and the reverse. An adjunct is never the verb's subject. `relation`: the question's
    (`Question.relation`)."""
    position = _verb_position(sentence, relation.verb) if relation is not None else None
    if relation is None or position is None:
        return False
    if relation.role == "adjunct":
        return lead.last < position and _before_verb(sentence, lead.last, position)
    between = sentence[min(position, lead.first) : max(position, lead.last)]
    if any(t.word.lower() in DOER_PREPOSITIONS for t in between) or any(
        t.word.lower() in BE_FORMS for t in sentence[max(0, position - 2) : position]
    ):
        return False  # passive, instrument or partner: the order says nothing
    return (lead.last < position) != (relation.role == "subject")


def subject_slot(relation: Relation | None, sentence: Sequence[Token], first: int, last: int) -> bool:
    """Asked for the subject ("What entity has taken the view …?"), whether the phrase from
    `first` to `last` stands where the subject does: right before the question's verb or its
    auxiliaries, or as the agent of that verb in the passive ("enforced by | the Court")."""
    if relation is None or relation.role != "subject":
        return False
    position = _verb_position(sentence, relation.verb)
    if position is None:
        return False
    if first > 1 and sentence[first - 1].word.lower() == "by" and position == first - 2:
        return True
    return position > last and _before_verb(sentence, last, position)
