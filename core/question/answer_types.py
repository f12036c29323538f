"""The type of answer a question asks for (the spans of a sentence of that type: typed_spans.py).

"Who …" asks for a person or organisation, "When …" / "In what year …" for a date or time, "Where
…" / "Which country …" for a place, "How many …" for a number (with its unit: "how long" → "six
minutes"), "Which/What X …" for an X, "Why …" for a reason; yes/no, list and comparison
questions keep their own forms (core/answer/answer_forms.py). Every rule reads general English:
question words, the class nouns that name people, places and times, number and date shapes,
UPOS tags and noun-phrase chunks (core/nlp/tagging.py, core/nlp) — never a word of a particular KB.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from core.nlp.tagging import Token, tag_text
from core.text.words import (
    AUXILIARIES,
    BE_TENSED,
    HOW_MEASURES,
    NUMBER_NOUNS,
    PERSON_CLASSES,
    PERSON_NOUNS,
    PLACE_NOUNS,
    SORT_NOUNS,
    THING_CLASSES,
    TIME_NOUNS,
    WH_WORDS,
)


class AnswerType(StrEnum):
    PERSON = "person or organisation"
    PLACE = "place"
    DATE = "date or time"
    NUMBER = "number"
    KIND = "kind"
    YES_NO = "yes/no"
    LIST = "list"
    REASON = "reason"
    COMPARISON = "comparison"
    MANNER = "manner"
    THING = "thing"
    DEFINITION = "definition"
    DESCRIPTION = "description"


# "In what order …?" asks for a sequence, every item of it.
_LIST_CUE = re.compile(
    r"^\s*(?:list|enumerate|name (?:all|every|the)\b)|\bwhat are (?:all )?the\b|\bin (?:what|which) order\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Expected:
    """What the question asks for: the type, the class noun of "which X" (or the unit of "how
    many X"), and the words of the question that said so ("what year" → date)."""

    type: AnswerType
    head: str = ""
    cue: str = ""
    # Words of the question that only shape the answer ("how *many*", "what *type* of"): the
    # evidence need not say them.
    form_words: tuple[str, ...] = ()

    def describe(self) -> str:
        head = f" ({self.head})" if self.head else ""
        return f'{self.type.value}{head}, from "{self.cue}"' if self.cue else f"{self.type.value}{head}"


def expected_type(question: str) -> Expected:
    """The type the wording asks for; "thing" (a noun phrase) when nothing narrower is said. Under
    an act that compares, a comparison instead (`Question.expected_for`), unless the wording asks
    for a list or a yes or no."""
    tokens = [t for t in tag_text(question) if t.tag != "PUNCT"]
    words = [t.word.lower() for t in tokens]
    if not words:
        return Expected(AnswerType.THING)
    if (list_cue := _LIST_CUE.search(question)) is not None:
        return Expected(AnswerType.LIST, cue=list_cue.group().strip())
    if words[0] in AUXILIARIES and " or " not in f" {question.lower()} ":
        return Expected(AnswerType.YES_NO, cue=words[0])
    at = next((i for i, w in enumerate(words) if w in WH_WORDS), None)
    if at is None:
        # Keywords or a statement of a problem ("jobs stay pending"): evidence, not a span, answers.
        return Expected(AnswerType.DESCRIPTION)
    wh, rest = words[at], words[at + 1 :]
    after = rest[0] if rest else ""
    if wh in ("who", "whom", "whose"):
        return Expected(AnswerType.PERSON, cue=wh)
    if wh == "when":
        return Expected(AnswerType.DATE, cue=wh)
    if wh == "where":
        return Expected(AnswerType.PLACE, cue=wh)
    if wh == "why":
        return Expected(AnswerType.REASON, cue=wh)
    if wh == "how":
        if after in HOW_MEASURES:
            head = _noun_after(tokens, at + 2) if after in ("many", "much") else ""
            return Expected(AnswerType.NUMBER, head=head, cue=f"how {after}", form_words=(after,))
        return Expected(AnswerType.MANNER, cue="how")
    head = _noun_after(tokens, at + 1) or _fronted_noun(tokens, at)
    if (
        not head
        and at + 2 < len(words)
        and after in BE_TENSED
        and words[at + 2] == "the"
        and not _ends_noun_phrase(tokens, at + 3)
        and not _stranded_passive(tokens, at + 3)
    ):
        # "What is the famous rock near …?" asks for a rock; "What is the Fresnel lens?" what it is.
        head = _noun_after(tokens, at + 3)
    # A gerund names an activity ("What is grafting?"); another verb asks what something does.
    verbs = [t for t in tokens[at + 2 :] if t.tag == "VERB" and not t.word.lower().endswith("ing")]
    if not head and wh in ("what", "who") and after in BE_TENSED and not verbs:
        # "What is Orion?", "Who were the otachi?": what it is, said by a sentence about it.
        return Expected(AnswerType.DEFINITION, cue=f"{wh} {after}")
    if not head:
        return Expected(AnswerType.THING, cue=wh)
    if head.lower() in SORT_NOUNS and at + 3 < len(words) and words[at + 2] == "of":
        # "what type of revolution" asks for a revolution.
        inner = _noun_after(tokens, at + 3)
        if inner:
            return replace(_by_class(inner, f"{wh} {head} of {inner}"), form_words=(head,))
    return _by_class(head, f"{wh} {head}")


def _by_class(head: str, cue: str) -> Expected:
    lower = head.lower().split()[-1]
    if lower in PERSON_NOUNS:
        return Expected(AnswerType.PERSON, head, cue)
    if lower in PLACE_NOUNS:
        return Expected(AnswerType.PLACE, head, cue)
    if lower in TIME_NOUNS:
        return Expected(AnswerType.DATE, head, cue)
    if lower in NUMBER_NOUNS:
        return Expected(AnswerType.NUMBER, head, cue)
    return Expected(_class_in_lexicon(lower), head, cue)


# WordNet classes above a noun that make "which X" ask for a person, a place, or a time. Groups
# are too wide a class ("combination" and "party" are groups in one sense); organisations come
# from the class nouns above.
_LEXICON_CLASSES = (
    (AnswerType.PERSON, PERSON_CLASSES),
    (AnswerType.PLACE, frozenset(("location", "geographic point", "geographical area", "region", "body of water"))),
    (AnswerType.DATE, frozenset(("time period", "time unit"))),
)
LEXICON_DEPTH = 8
# Only the noun's likeliest lemma and its commonest senses (WordNet lists them first) say what it
# asks for: over every sense, "parts" is a place ("these parts") and "line" one too (a fortified
# line), so "which parts" looked for places.
_CLASS_SENSES = 2


def _class_in_lexicon(noun: str) -> AnswerType:
    from core.nlp import lexicon_or_none

    lex = lexicon_or_none()
    if lex is None:
        return AnswerType.KIND
    lemma = lex.lemma(noun, "NOUN")
    # The lemma itself may be the class ("which locations").
    above = lex.classes(lemma, "NOUN", depth=LEXICON_DEPTH, senses=_CLASS_SENSES) | {lemma}
    kind = next((kind for kind, marks in _LEXICON_CLASSES if marks & above), AnswerType.KIND)
    if kind is AnswerType.PERSON and THING_CLASSES & above:
        # "rock" and "conductor" are people in a rare sense and things in a common one.
        return AnswerType.KIND
    return kind


def _fronted_noun(tokens: Sequence[Token], at: int) -> str:
    """The word between "what"/"which" and a fronted auxiliary is the asked-for noun whatever
    its tag ("In 1755 what fort did the British capture?": the tagger, seeing "fort did",
    says VERB), when the lexicon knows it as a noun."""
    from core.nlp import lexicon_or_none

    if tokens[at].word.lower() not in ("what", "which") or at + 2 >= len(tokens):
        return ""
    word = tokens[at + 1].word
    if (
        tokens[at + 2].word.lower() not in AUXILIARIES
        or not word.isalpha()
        or tokens[at + 1].tag in ("AUX", "PRON", "DET")
    ):
        return ""
    lex = lexicon_or_none()
    return word if lex is not None and "n" in lex.parts_of_speech(word) else ""


def _ends_noun_phrase(tokens: Sequence[Token], start: int) -> bool:
    """Whether the question ends with the noun phrase starting at `start` (nothing after it)."""
    rest = tokens[start:]
    return bool(rest) and all(t.tag in ("NOUN", "PROPN", "ADJ", "NUM") for t in rest)


def _stranded_passive(tokens: Sequence[Token], start: int) -> bool:
    """Whether the noun phrase at `start` is the subject of a passive whose preposition ends the
    question ("What is the jar | sealed with?", "made of?", "covered in?"): what is asked is the
    preposition's object, not a kind of the subject. A participle before a preposition that goes
    on names a kind ("What was the first film | released by Disney?" asks for a film)."""
    at = start
    while at < len(tokens) and tokens[at].tag in ("DET", "NOUN", "PROPN", "ADJ", "NUM"):
        at += 1
    while at < len(tokens) and tokens[at].tag == "ADV":
        at += 1
    return at + 2 == len(tokens) and at > start and tokens[at].tag == "VERB" and tokens[at + 1].tag == "ADP"


def _noun_after(tokens: Sequence[Token], start: int) -> str:
    """The head of the noun phrase right after the question word ("what German poet" → poet,
    "the Orion retention quota" → quota): the last common noun of the run of adjectives, names
    and nouns; "" when only a name or a verb follows."""
    head = ""
    for token in tokens[start:]:
        if token.tag == "NOUN":
            head = token.word
        elif token.tag not in ("ADJ", "PROPN"):
            break
    return head
