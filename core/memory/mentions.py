"""Mentions a follow-up's pronoun may point back to, each typed and placed.

A conversation's referents come from three places: the questions asked before (as resolved), the
answers given (their leads), and the story's own text the last answer cited (its units: CoQA's
follow-ups point at people in the passage just discussed, not only at what memory recorded).
Every noun phrase there is a `Mention`, typed by what English lets a pronoun stand for
(core/answer/coref.py decides it, the same way an answer's own references are resolved):
- a person ("he"/"she"): a name that acts, or a phrase whose noun is a kind of person ("the
  farmer", "her mother"), with a gender when the lexicon gives its noun one ("mother" is female)
  or the text refers to the name as "he" or "she" in the sentence that names it or the next;
- a thing ("it"): a name or a singular noun that is no person;
- several ("they"): a plural noun, a group ("the crew"), names joined by "and".
A date, a number or a quantity ("20 pounds") is never a mention: it says when or how much.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal

from core.answer.coref import antecedents, noun_classes
from core.cnl.plain_sentences import split_sentences
from core.memory.people import People, people_of
from core.nlp.tagging import tag_text
from core.text.words import (
    GROUP_CLASSES,
    MEASURE_CLASSES,
    MENTION_PREPOSITIONS,
    MENTION_WH,
    PERSON_CLASSES,
    POSSESSIVES,
    PRONOUN_GROUPS,
    WH_WORDS,
)

Source = Literal["question", "answer", "story"]
Gender = Literal["he", "she", ""]

# Sentences read from one text: a unit may be a long paragraph, and a follow-up points at the
# passage just discussed, not at the whole story (budget: maxMentionSentences).
MAX_SENTENCES = 12
# Mentions kept from one turn's texts together (budget: maxMentionsPerTurn).
MAX_PER_TURN = 60
# A kinship or role noun's gender may sit in its second sense ("sister": a nun first in WordNet).
_GENDER_SENSES = 2
_TITLES = {
    "mr": "he",
    "mr.": "he",
    "sir": "he",
    "mrs": "she",
    "mrs.": "she",
    "ms": "she",
    "ms.": "she",
    "miss": "she",
    "lady": "she",
    "madam": "she",
}
_DETERMINERS = frozenset("a an".split())
_QUOTES = frozenset("\" “ ‘ ' ``".split())
_ACRONYM = 5

_HE, _SHE = PRONOUN_GROUPS["he"], PRONOUN_GROUPS["she"]


@dataclass(frozen=True)
class Mention:
    """A phrase of an earlier turn that a pronoun or "the same X" may refer to, with its features."""

    text: str
    head: str  # the phrase's last word, lower-cased: what "the same X" and repetition compare
    source: Source
    back: int  # turns back from the question being asked (0: the latest turn)
    subject: bool  # the first phrase of its sentence (English puts the subject first)
    named: bool
    person: bool
    thing: bool
    several: bool
    gender: Gender = ""
    # Known to be someone, not only a name that acts: a person noun, a gender or title, or a name
    # set beside a person noun ("Dennis Farina, the … actor").
    personal: bool = False
    # How often the whole story text shows this name is someone (core/memory/people.py).
    evidence: int = 0

    @property
    def kind(self) -> str:
        return "person" if self.person else "several" if self.several and not self.thing else "thing"


@dataclass(frozen=True)
class TurnText:
    """What one earlier turn offers: its question, its answer's lead and the text it cited."""

    back: int
    question: str = ""
    lead: str = ""
    story: tuple[str, ...] = ()
    # What the question was about, as memory recorded it (core/memory/entities.py): a name the
    # tagger missed ("What is Tern?" reads Tern as an adjective) is still a mention.
    entity: str = ""
    # The caller's view of the whole file the cited units are from: only counted (how often a
    # referent is said there), never read for mentions.
    document: str = ""


def mentions_of(turns: Sequence[TurnText]) -> list[Mention]:
    """Every mention of the turns, each turn's story text after its question and answer, and the
    genders the story text gives its names applied to every mention of the same name."""
    found: list[Mention] = []
    genders: Counter[tuple[str, str]] = Counter()
    document = next((t.document for t in turns if t.document), "")
    people = people_of(document)
    inside = capitalised_inside(
        "\n".join([document, *(text for t in turns for text in (t.question, t.lead, t.entity, *t.story))])
    )
    source: Source
    for turn in turns:
        mine: list[Mention] = []
        for source, texts in (("question", [turn.question]), ("answer", [turn.lead]), ("story", turn.story)):
            if source == "answer" and turn.entity and not any(m.text == turn.entity for m in mine):
                mine += _sentence_mentions(turn.entity, "question", turn.back, genders, inside)
            for text in texts:
                subject = ""
                for sentence in _sentences(text):
                    opening = sentence.split(maxsplit=1)[0].lower() if sentence.split() else ""
                    if subject and opening in _HE | _SHE:
                        genders[(subject, "he" if opening in _HE else "she")] += 1
                    said = _sentence_mentions(sentence, source, turn.back, genders, inside)
                    subject = said[0].text.lower() if said and said[0].named and said[0].person else ""
                    mine += said
        found += mine[:MAX_PER_TURN]
    return [_attested(_gendered(m, genders), people) for m in found]


def _sentences(text: str) -> list[str]:
    if not text.strip():
        return []
    return [s.text for s in split_sentences(text)][:MAX_SENTENCES]


def _sentence_mentions(
    sentence: str, source: Source, back: int, genders: Counter, inside: frozenset[str] = frozenset()
) -> list[Mention]:
    tokens = tag_text(sentence)
    typed = (_opening_word(tokens, p, inside) for p in antecedents(tokens, sentence))
    phrases = [
        p
        for p in typed
        if p is not None
        and not _quantity(tokens, p.first)
        and not _asked(tokens, p.first)
        and not (tokens[p.last].tag == "NOUN" and _time(tokens[p.last].word))
    ]
    out = []
    for at, phrase in enumerate(phrases):
        first = _name_start(tokens, phrase) if phrase.named else phrase.first
        words = [t.word for t in tokens[first : phrase.last + 1]]
        skip = 1 if words[0].lower() in _DETERMINERS and len(words) > 1 else 0
        written = sentence[tokens[first + skip].start : tokens[phrase.last].end]
        text = phrase.text if phrase.text != phrase_text(tokens, phrase, sentence) else written
        if words[0].lower() in _DETERMINERS and not phrase.named:
            text = f"the {text}"
        elif phrase.first and tokens[phrase.first - 1].word.lower() in POSSESSIVES:
            text = f"{tokens[phrase.first - 1].word} {text}"
        gender = _title_gender(tokens, phrase.first) or (
            _noun_gender(words[-1]) if phrase.person and not phrase.named else ""
        )
        person = phrase.person and not (
            phrase.named and (_work_or_acronym(tokens, first, phrase.last) or _placed(tokens, phrase.first))
        )
        personal = person and (not phrase.named or bool(gender) or phrase.text != phrase_text(tokens, phrase, sentence))
        out.append(
            Mention(
                text=text,
                head=text.split()[-1].lower().strip(".,"),
                source=source,
                back=back,
                subject=at == 0,
                named=phrase.named,
                person=person,
                thing=phrase.thing,
                several=phrase.several,
                gender=gender,
                personal=personal,
            )
        )
    if out and out[0].named and out[0].person:
        # "Anna went home. She …": the text calls its subject "she" in the same sentence or the next.
        said = {t.word.lower() for t in tokens[phrases[0].last + 1 :]}
        for word in said & (_HE | _SHE):
            genders[(out[0].text.lower(), "he" if word in _HE else "she")] += 1
    return out


def phrase_text(tokens: Sequence, phrase, sentence: str) -> str:
    return sentence[tokens[phrase.first].start : tokens[phrase.last].end]


def _name_start(tokens: Sequence, phrase) -> int:
    """Where a name's words begin: a capitalised adverb or conjunction that opens a sentence is not
    part of it ("Reluctantly Archie", "where Bruce"), nor a common noun before it ("the camp Archie")."""
    tags = [t.tag for t in tokens[phrase.first : phrase.last + 1]]
    for tag in ("PROPN", "NOUN"):
        if tag in tags:
            return phrase.first + tags.index(tag)
    return phrase.first


def _opening_word(tokens: Sequence, phrase, inside: frozenset[str]):
    """A capitalised word alone that opens a sentence of several words ("Says …", "River levels
    rose") is a name only if the lexicon does not know it as a common word or the text also writes it
    capitalised mid-sentence; else it is that common word: a noun typed by the lexicon, anything
    else no mention. A question word is never one."""
    word = tokens[phrase.first].word
    if all(t.word.lower() in WH_WORDS for t in tokens[phrase.first : phrase.last + 1]):
        return None
    opening = next((i for i, t in enumerate(tokens) if t.word not in _QUOTES), 0)
    alone = sum(t.tag != "PUNCT" for t in tokens) == 1  # "Petrel", an answer: capitalised as written
    if not phrase.named or phrase.first != phrase.last or phrase.first != opening or alone or word.lower() in inside:
        return phrase
    kinds = _parts_of_speech(word.lower())
    if not kinds:
        return phrase
    if "n" not in kinds:
        return None
    classes = noun_classes(word.lower())
    plural = _lemma(word.lower()) != word.lower()
    person = not plural and bool(classes & PERSON_CLASSES)
    several = plural or bool(classes & GROUP_CLASSES)
    return replace(phrase, named=False, person=person, thing=not person and not plural, several=several)


_CAPITAL = re.compile(r"(?<=[a-z0-9,;:] )([A-Z][a-z]+)")


@lru_cache(maxsize=8)
def capitalised_inside(text: str) -> frozenset[str]:
    """The words (lower-cased) the text writes capitalised after a lower-case word or a comma,
    so not because a sentence opens there: the names it uses."""
    return frozenset(w.lower() for w in _CAPITAL.findall(text))


def _parts_of_speech(word: str) -> frozenset[str]:
    lexicon = _lexicon()
    return lexicon.parts_of_speech(word) if lexicon is not None else frozenset()


def _lemma(word: str) -> str:
    lexicon = _lexicon()
    return lexicon.lemma(word, "NOUN") if lexicon is not None else word


def _placed(tokens: Sequence, first: int) -> bool:
    """ "the village of Oswick", "moved to Leeds": a name after a preposition of place or
    belonging is where or what, not who."""
    return first > 0 and tokens[first - 1].word.lower() in MENTION_PREPOSITIONS


def _work_or_acronym(tokens: Sequence, first: int, last: int) -> bool:
    """A name in quotes is a work's title ("Miami Vice"); a short all-capital one an organisation
    (CNN): neither is a "he" or "she"."""
    quoted = first > 0 and tokens[first - 1].word in _QUOTES
    word = tokens[first].word
    return quoted or (first == last and word.isupper() and len(word) <= _ACRONYM)


def _asked(tokens: Sequence, first: int) -> bool:
    """ "What company …?": the phrase a wh-word asks about stands for the answer, not for itself."""
    return tokens[first].word.lower() in MENTION_WH or (first > 0 and tokens[first - 1].word.lower() in MENTION_WH)


def _time(noun: str) -> bool:
    """A time or a measure ("next year", "the majority") says when or how much, not who or what."""
    return bool(noun_classes(noun) & MEASURE_CLASSES)


def _quantity(tokens: Sequence, first: int) -> bool:
    """A phrase opening with a number counts or measures something ("20 pounds", "two weeks")."""
    return tokens[first].tag == "NUM"


def _title_gender(tokens: Sequence, first: int) -> Gender:
    word = tokens[first].word.lower()
    before = tokens[first - 1].word.lower() if first else ""
    return _TITLES.get(word) or _TITLES.get(before) or ""  # type: ignore[return-value]


def _noun_gender(noun: str) -> Gender:
    """ "she" for a noun that is a kind of female person or names one ("mother" = female parent)."""
    words = {w for name in noun_classes(noun, _GENDER_SENSES) | _synonyms(noun) for w in name.split()}
    female, male = "female" in words, "male" in words
    return "she" if female and not male else "he" if male and not female else ""


def _gendered(mention: Mention, genders: Counter) -> Mention:
    if mention.gender or not (mention.named and mention.person):
        return mention
    he, she = genders[(mention.text.lower(), "he")], genders[(mention.text.lower(), "she")]
    if he == she:
        return mention
    return Mention(**{**mention.__dict__, "gender": "he" if he > she else "she", "personal": True})


def _attested(mention: Mention, people: People) -> Mention:
    """A name with what the story text says of it: its gender where the cited text gave none, and a
    name the text calls "he" or "she" is someone even where the tagger read it as no agent."""
    if not mention.named:
        return mention
    evidence = people.evidence(mention.text)
    gender = mention.gender or people.gender(mention.text)
    if not evidence and gender == mention.gender:
        return mention
    person = mention.person or bool(people.gender(mention.text))
    return Mention(
        **{
            **mention.__dict__,
            "gender": gender if person else "",
            "person": person,
            "personal": mention.personal or (person and bool(gender)),
            "evidence": evidence,
        }
    )


def _synonyms(noun: str) -> frozenset[str]:
    lexicon = _lexicon()
    return lexicon.synonyms(noun, "NOUN") if lexicon is not None else frozenset()


def _lexicon():
    from core.nlp import lexicon_or_none

    return lexicon_or_none()


def salience(document: str) -> Counter[str]:
    """How often each word is said in the document (lower-cased): the story's protagonist is said
    again and again."""
    return Counter(re.findall(r"[a-z0-9']+", document.lower()))


def heads(mentions: Iterable[Mention]) -> Counter[str]:
    """How often each head word is mentioned: a referent talked about again and again is likelier."""
    return Counter(m.head for m in mentions)
