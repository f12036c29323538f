"""Who the story's names are, as the story itself says: a name the text goes on to call "she" is a
woman, one that says, thinks or feels something is someone.

No list of first names: the evidence is the text's own grammar, read over the caller's view of the
file the cited units are from (`TurnText.document`):
- **gender**: a sentence's first name before its first verb (its subject, as English puts it), not
  after a preposition nor a possessor, and the first "he"/"his"/"she"/"her" after it in that
  sentence, or opening the next one ("Anna went home. She …"), count for that gender; the
  majority decides, a tie says nothing;
- **acts as someone**: a name directly followed by a verb of saying, thinking or feeling (the
  lexicon's classes of the verb: "Farina said", "Anna decided") or set beside a person noun by a
  comma ("Dennis Farina, the actor") is counted as evidence that it names a person.
Each count is kept under every word of the name ("Diana" and "Spencer" after "Diana Frances
Spencer") and looked up by a mention's last word. The counts are features of a referent (core/memory/referents.py), weighted by what
scripts/learn_referents.py learned, never a rule of their own.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

from core.cnl.plain_sentences import split_sentences
from core.nlp.tagging import tag_text
from core.question.typed_spans import name_spans
from core.text.words import PERSON_CLASSES, PERSON_VERB_CLASSES, PRONOUN_GROUPS

# Sentences of one file read for evidence (budget: maxPeopleSentences): a story is read whole,
# a large file only from its start.
MAX_SENTENCES = 400
_HE, _SHE = PRONOUN_GROUPS["he"], PRONOUN_GROUPS["she"]
# Words of a name counted: longer runs are titles of works or organisations.
_NAME_WORDS = 4


@dataclass(frozen=True)
class People:
    """Per name (lower-cased, whole and by its last word): the text's evidence about it."""

    he: Counter[str] = field(default_factory=Counter)
    she: Counter[str] = field(default_factory=Counter)
    acts: Counter[str] = field(default_factory=Counter)

    def gender(self, name: str) -> str:
        he, she = self.he[key(name)], self.she[key(name)]
        return "" if he == she else "he" if he > she else "she"

    def evidence(self, name: str) -> int:
        """How often the text shows the name is someone: gendered or acting as a person."""
        said = key(name)
        return self.he[said] + self.she[said] + self.acts[said]


NOBODY = People()


def key(name: str) -> str:
    """A name is looked up by its last word ("Farina" for "Dennis Farina", "Spencer")."""
    words = _words(name)
    return words[-1] if words else ""


def _words(name: str) -> list[str]:
    return [w.strip(".,") for w in name.lower().replace("'s", "").split()][:_NAME_WORDS]


def _count(counts: Counter[str], name: str) -> None:
    """Counted under every word of the name: "Diana Frances Spencer" is later "Diana" or "Spencer"."""
    for word in _words(name):
        counts[word] += 1


@lru_cache(maxsize=8)
def people_of(document: str) -> People:
    """The evidence `document` gives about its names (cached: every follow-up of a conversation
    over one file reads the same text)."""
    if not document.strip():
        return NOBODY
    found = People()
    subject = ""
    for sentence in [s.text for s in split_sentences(document)][:MAX_SENTENCES]:
        tokens = tag_text(sentence)
        if not tokens:
            continue
        opening = tokens[0].word.lower()
        if subject and opening in _HE | _SHE:
            _count(found.he if opening in _HE else found.she, subject)
        names = [n for n in name_spans(tokens, sentence) if not _acronym(n.text)]
        subject = ""
        for span in names:
            after = span.last + 1
            if after < len(tokens) and _person_verb(tokens[after].word, tokens[after].tag):
                _count(found.acts, span.text)
            if after + 2 < len(tokens) and tokens[after].word == "," and _person_noun(tokens, after + 1):
                _count(found.acts, span.text)
        verb = next((i for i, t in enumerate(tokens) if t.tag in ("VERB", "AUX")), len(tokens))
        subjects = [n for n in names if n.last < verb and _subject(tokens, n)]
        if subjects:
            subject = subjects[0].text
            # The first "he"/"his"/"she"/"her" after it: a later one may be someone else's.
            said = next((t.word.lower() for t in tokens[subjects[0].last + 1 :] if t.word.lower() in _HE | _SHE), "")
            if said:
                _count(found.he if said in _HE else found.she, subject)
    return found


def _subject(tokens, span) -> bool:
    """Not a place or a time ("In Los Angeles, he …": after a preposition), not a possessor
    ("Bieber's representative said she …": the representative is the subject), a modifier ("A
    Los Angeles coroner ruled") or a dateline ("Los Angeles (CNN) --")."""
    before = tokens[span.first - 1].tag if span.first else ""
    after = tokens[span.last + 1] if span.last + 1 < len(tokens) else None
    return before != "ADP" and (after is None or (after.word not in ("'s", "’s", "'", "(") and after.tag != "NOUN"))


def _acronym(name: str) -> bool:
    """ "(CNN) --", "LOS ANGELES, California": a name in capitals is an organisation or a
    dateline, never the story's "he"."""
    return name.isupper()


def _person_verb(word: str, tag: str) -> bool:
    if tag != "VERB":
        return False
    from core.nlp import lexicon_or_none

    lexicon = lexicon_or_none()
    return lexicon is not None and bool(lexicon.classes(word, "VERB") & PERSON_VERB_CLASSES)


def _person_noun(tokens, start: int) -> bool:
    """ "Farina, the dapper actor": the first noun after the comma (within a few words) is a person."""
    from core.answer.coref import noun_classes

    for token in tokens[start : start + 5]:
        if token.tag == "NOUN":
            return bool(noun_classes(token.word.lower()) & PERSON_CLASSES)
        if token.tag in ("VERB", "AUX", "PUNCT"):
            return False
    return False
