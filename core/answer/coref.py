"""Pronouns, "the company" and "their daughter" resolved to the nearest compatible antecedent.

A sentence saying "He cleared the strainer" answers "Who cleared the strainer?" only once "He" is
the "Olu" of a sentence before; "Their daughter" is someone's daughter only once the text names
her. An antecedent is a whole noun phrase (core/nlp/chunk.py): "her" after "Tern is maintained by
the Harwick boatyard" is not "Harwick" but the nearest phrase that can be a "her".

Where it looks (the issue's rule: the same unit or the one before): in the reference's own
sentence, the nearest phrase before it; then the sentences given as context, nearest first, each
one's first phrase (its subject, in English word order) before its others, since a pronoun that
opens a sentence continues what the sentence before was about ("Tern was refitted by the yard.
It sails again in May": Tern sails).

What is compatible is what English marks:
- "he"/"she": one person: a name that can act (not after "in"/"to", not "Duchy of Normandy"), or
  a phrase whose noun's commonest sense is a kind of person ("the pharmacist"), which stands for
  the name it is set beside by a comma ("Mara Quill, a local schoolteacher");
- "it"/"its": one thing: a name, or a singular phrase whose noun is not a person ("the boatyard");
- "they"/"their": several: names joined by "and", a plural noun, a name, or a group ("the crew");
- "the company", "the team" (a definite class noun): the nearest name; "the town", "the city",
  "the country" a name that is not someone who acts (a place's, after "in", "at", "near" …);
- "their daughter", "her brother" (a possessive and a kinship noun): the person the text names as
  that relative ("a daughter, Ines", "Ines, their daughter", "Ines is their daughter").
A date is when, not who or what: never an antecedent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING

from core.answer.lead_spans import is_currency
from core.nlp.chunk import noun_phrases
from core.nlp.tagging import Token, tag_text
from core.question.typed_spans import DATE_PATTERN, Span, agents, name_spans
from core.text.words import (
    BE_FORMS,
    CLAUSE_DEMONSTRATIVES,
    GROUP_CLASSES,
    KIN_CLASSES,
    NEUTER_PRONOUNS,
    PERSON_CLASSES,
    PERSONAL_PRONOUNS,
    PLURAL_PRONOUNS,
    POSSESSIVES,
    REFERRING_NOUNS,
    REFERRING_PLACES,
)

if TYPE_CHECKING:
    from core.nlp.lexicon import Lexicon

# Every word `resolve` may resolve, besides "the" + a referring noun.
_PRONOUNS = PERSONAL_PRONOUNS | NEUTER_PRONOUNS | PLURAL_PRONOUNS
_REFERENCES = _PRONOUNS | POSSESSIVES
# A name of more words than this is a title or a place ("Duchy of Normandy"), not one person.
_PERSON_NAME_WORDS = 3
_CLASS_DEPTH = 16
# A kinship noun counts in any of its commonest senses ("brother" is a monk first in WordNet).
_KIN_SENSES = 3
# A kinship noun and the name it stands beside ("a daughter, Ines") are at most this many words apart.
_APPOSITION_GAP = 2


@dataclass(frozen=True)
class Resolution:
    """A reference in a sentence and the earlier phrase it stands for."""

    reference: str
    antecedent: str
    # Whether the antecedent can be someone ("he", "their daughter"; not "it" → "the site"),
    # so that it may answer "who".
    person: bool = False

    def __str__(self) -> str:
        return f"{self.reference} \u2192 {self.antecedent}"


@dataclass(frozen=True)
class _Phrase:
    """A noun phrase that may be an antecedent: its words, its head noun and what it can be."""

    text: str
    first: int
    last: int
    named: bool  # a name (a run of proper nouns) is inside it
    person: bool  # can be "he"/"she"
    thing: bool  # can be "it"
    several: bool  # can be "they"


def mentions_reference(text: str) -> bool:
    """Whether the text has a word `resolve` may resolve (checked on words, before any tagging)."""
    words = [w.strip(".,;:!?\"'()").lower() for w in text.split()]
    return (
        any(w in _PRONOUNS for w in words)
        or any(a == "the" and b in REFERRING_NOUNS for a, b in zip(words, words[1:]))
        or (len(words) > 1 and words[0] in CLAUSE_DEMONSTRATIVES and words[1] in BE_FORMS)
    )


def resolve(tokens: Sequence[Token], text: str, context: Sequence[str]) -> dict[int, Resolution]:
    """Token index of each resolvable reference in the sentence → its antecedent. A kinship
    reference ("Their daughter") is keyed by its possessive, the pronoun that stands for it."""
    found: dict[int, Resolution] = {}
    clause = _clausal_reference(tokens, context)
    if clause is not None:
        found[0] = clause
    words = [t.word.lower() for t in tokens]
    if not any(w in _REFERENCES or (w in REFERRING_NOUNS and i and words[i - 1] == "the") for i, w in enumerate(words)):
        return found  # nothing to resolve: no need to chunk this sentence or the ones before it
    here = _phrases(tokens, text)
    earlier = [(_phrases(tag_text(line), line), tag_text(line), line) for line in reversed(context)]
    for index, token in enumerate(tokens):
        lower = token.word.lower()
        kin = _kinship(tokens, index, text, earlier)
        if kin is not None:
            found[index] = kin
            continue
        referring = index > 0 and tokens[index - 1].word.lower() == "the" and lower in REFERRING_NOUNS
        if lower not in _PRONOUNS and not referring:
            continue
        before = [p for p in here if p.last < index and not (referring and p.last >= index - 1)]
        pool = before[::-1] + [p for phrases, _, _ in earlier for p in _subject_first(phrases)]
        match = next(
            (p for p in pool if _compatible(lower, p, referring) and not (lower in REFERRING_PLACES and p.person)), None
        )
        if match is not None:
            reference = f"the {token.word}" if referring else token.word
            found[index] = Resolution(
                reference, match.text, person=match.person or (lower in PLURAL_PRONOUNS and match.named)
            )
    return found


def _clausal_reference(tokens: Sequence[Token], context: Sequence[str]) -> Resolution | None:
    """A sentence that opens "This is done by X" (a demonstrative subject, then a passive with its
    agent) says who did what the sentence before it says: "This" stands for that whole clause,
    so the agent answers "who" of it ("Inspections are recorded on cards. This is done by the
    apiary manager, Olwen Reese")."""
    if not context or len(tokens) < 4 or tokens[0].word.lower() not in CLAUSE_DEMONSTRATIVES:
        return None
    if tokens[0].tag != "PRON" or tokens[1].word.lower() not in BE_FORMS:
        return None
    verb = next((i for i in range(2, len(tokens)) if tokens[i].tag != "ADV"), None)
    if verb is None or tokens[verb].tag != "VERB" or not any(t.word.lower() == "by" for t in tokens[verb + 1 :]):
        return None
    return Resolution(tokens[0].word, context[-1].strip().rstrip("."))


def antecedents(tokens: Sequence[Token], text: str) -> list[_Phrase]:
    """The sentence's phrases that a later reference may stand for, each with what it can be
    (conversation memory types its mentions the same way: core/memory/mentions.py)."""
    return _phrases(tokens, text)


def noun_classes(noun: str, senses: int = 1) -> frozenset[str]:
    """What the noun's commonest `senses` senses are kinds of (WordNet)."""
    return _classes(noun, senses)


def _subject_first(phrases: list[_Phrase]) -> list[_Phrase]:
    """A sentence's first phrase (its subject), then the rest nearest the end first."""
    return phrases[:1] + phrases[1:][::-1]


def _compatible(reference: str, phrase: _Phrase, referring: bool) -> bool:
    if referring:
        return phrase.named
    if reference in PERSONAL_PRONOUNS:
        return phrase.person
    if reference in NEUTER_PRONOUNS:
        return phrase.thing
    return phrase.several


def _phrases(tokens: Sequence[Token], text: str) -> list[_Phrase]:
    """The sentence's noun phrases, with names joined across "of" ("Duchy of Normandy") and
    names joined by "and" ("Mara and Tomas") taken as one phrase of several people."""
    names = name_spans(tokens, text)
    acting = {(n.first, n.last) for n in agents(names, tokens, text)}
    dates = [(m.start(), m.end()) for m in DATE_PATTERN.finditer(text)]
    chunks = [_without_verb(tokens, s, e - 1) for s, e in noun_phrases([(t.word, t.tag) for t in tokens])]
    spans = _merged(chunks, names)
    phrases: list[_Phrase] = []
    for first, last in spans:
        words = tokens[first : last + 1]
        if all(t.tag in ("NUM", "DET", "PUNCT") for t in words) or _dated(dates, words):
            continue
        phrase_text = text[words[0].start : words[-1].end]
        name = next((n for n in names if first <= n.first and n.last <= last), None)
        head = words[-1]
        if name is not None and name.last == last:
            person = (
                (name.first, name.last) in acting
                and " of " not in f" {name.text} "
                and len(name.text.split()) <= _PERSON_NAME_WORDS
            )
            phrases.append(_Phrase(phrase_text, first, last, True, person, True, True))
            continue
        plural = head.tag == "NOUN" and _plural(head.word)
        if first == last == 0 and head.tag == "NOUN" and head.word[:1].isupper() and not plural:
            # A capitalised singular noun opening a sentence without a determiner is a name the
            # tagger took for a noun ("Tern is maintained by …"): English puts "the" before a
            # common one.
            phrases.append(_Phrase(phrase_text, first, last, True, True, True, True))
            continue
        classes = _classes(head.word)
        person = not plural and bool(classes & PERSON_CLASSES)
        group = bool(classes & GROUP_CLASSES)
        phrases.append(
            _Phrase(phrase_text, first, last, name is not None, person, not person and not plural, plural or group)
        )
    return _coordinated(_apposed(phrases, tokens), tokens, text)


def _without_verb(tokens: Sequence[Token], first: int, last: int) -> tuple[int, int]:
    """The subject without the verb the tagger took for its last noun: "A pantograph carbon strip
    costs €410" is "A pantograph carbon strip" and "costs". Before the sentence's first verb two
    noun phrases stand side by side only when the first ends in a verb, so a phrase directly
    followed by a determiner, a number or a currency sign ends before a last word that the
    lexicon knows as an inflected verb."""
    if last == first or last + 1 >= len(tokens) or tokens[last].tag != "NOUN":
        return first, last
    after = tokens[last + 1]
    if after.tag not in ("DET", "NUM") and not is_currency(after):
        return first, last
    if any(t.tag in ("VERB", "AUX") for t in tokens[:first]):
        return first, last
    lexicon = _lexicon()
    word = tokens[last].word.lower()
    if lexicon is None or "v" not in lexicon.parts_of_speech(word) or lexicon.lemma(word, "VERB") == word:
        return first, last
    return first, last - 1


def _apposed(phrases: list[_Phrase], tokens: Sequence[Token]) -> list[_Phrase]:
    """ "Mara Quill, a local schoolteacher, …": the phrase set off by a comma after a person's name
    is that person, and stands for the name ("She" after it is Mara Quill, not "a schoolteacher")."""
    out = list(phrases)
    for at, (one, other) in enumerate(zip(phrases, phrases[1:])):
        if (
            one.named
            and one.person
            and other.person
            and not other.named
            and other.first == one.last + 2
            and tokens[one.last + 1].word == ","
        ):
            out[at + 1] = replace(other, text=one.text, named=True)
    return out


def _merged(chunks: list[tuple[int, int]], names: list[Span]) -> list[tuple[int, int]]:
    """Chunks with a name spread over several of them ("Duchy" "of" "Normandy") made one."""
    merged = list(chunks)
    for name in names:
        inside = [c for c in merged if c[1] >= name.first and c[0] <= name.last]
        if len(inside) > 1:
            merged = [c for c in merged if c not in inside] + [(min(c[0] for c in inside), max(c[1] for c in inside))]
    return sorted(merged)


def _coordinated(phrases: list[_Phrase], tokens: Sequence[Token], text: str) -> list[_Phrase]:
    """ "Mara and Tomas" is also one antecedent, of several, for "they"."""
    joined = []
    for one, other in zip(phrases, phrases[1:]):
        if other.first == one.last + 2 and tokens[one.last + 1].word.lower() == "and" and one.named and other.named:
            both = text[tokens[one.first].start : tokens[other.last].end]
            joined.append(_Phrase(both, one.first, other.last, True, False, False, True))
    return sorted(phrases + joined, key=lambda p: (p.first, -p.last))


def _dated(dates: list[tuple[int, int]], words: Sequence[Token]) -> bool:
    """Whether the phrase names a time: its head is a date ("every second Monday", "the 1990s"),
    and so is each of its proper nouns ("Theresa May" is someone, though "May" is a month)."""
    return all(_inside(dates, t) for t in [words[-1], *(t for t in words if t.tag == "PROPN")])


def _inside(dates: list[tuple[int, int]], token: Token) -> bool:
    return any(start <= token.start and token.end <= end for start, end in dates)


def _plural(noun: str) -> bool:
    """A noun's only inflection is its number: a form that is not its own lemma is plural."""
    lexicon = _lexicon()
    lower = noun.lower()
    if lexicon is None or not lexicon.parts_of_speech(lower):
        return lower.endswith("s") and not lower.endswith("ss")
    return lexicon.lemma(lower, "NOUN") != lower


@lru_cache(maxsize=4096)
def _classes(noun: str, senses: int = 1) -> frozenset[str]:
    """What the noun's commonest senses are kinds of (WordNet, up to _CLASS_DEPTH steps)."""
    lexicon = _lexicon()
    if lexicon is None:
        return frozenset()
    return lexicon.classes(noun, "NOUN", depth=_CLASS_DEPTH, senses=senses)


def _lexicon() -> Lexicon | None:
    from core.nlp import lexicon_or_none

    return lexicon_or_none()


def _kinship(
    tokens: Sequence[Token], index: int, text: str, earlier: list[tuple[list[_Phrase], tuple[Token, ...], str]]
) -> Resolution | None:
    """ "Their daughter" → the name the text gives that daughter, if it gives one."""
    if tokens[index].word.lower() not in POSSESSIVES or index + 1 >= len(tokens):
        return None
    noun = tokens[index + 1]
    if noun.tag != "NOUN" or not (_classes(noun.word, _KIN_SENSES) & KIN_CLASSES):
        return None
    for line_tokens, line in [(tokens, text), *((t, line) for _, t, line in earlier)]:
        named = _named_relative(noun.word, line_tokens, line)
        if named is not None:
            return Resolution(f"{tokens[index].word} {noun.word}", named, person=True)
    return None


def _named_relative(kin: str, tokens: Sequence[Token], text: str) -> str | None:
    """The person's name a sentence gives beside the kinship noun `kin`: "a daughter, Ines",
    "their daughter Ines", "Ines, their daughter", "Ines is their daughter"."""
    people = [n for n in agents(name_spans(tokens, text), tokens, text) if len(n.text.split()) <= _PERSON_NAME_WORDS]
    for at, token in enumerate(tokens):
        if token.word.lower() != kin.lower():
            continue
        after = [n for n in people if 0 < n.first - at <= _APPOSITION_GAP]
        if after and all(t.word in ",(" for t in tokens[at + 1 : after[0].first]):
            return after[0].text
        before = [n for n in people if n.last < at <= n.last + _APPOSITION_GAP + 2]
        between = {t.word.lower() for t in tokens[before[-1].last + 1 : at]} if before else set()
        if between & {",", "is", "was", "are", "were"}:
            return before[-1].text
    return None
