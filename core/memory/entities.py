"""What a question is about: the thing a later "it" or "And X?" points back to."""

from __future__ import annotations

from core.nlp.chunk import noun_phrases
from core.nlp.tagger import tag_text
from core.text.words import WH_AND_QUANTIFIERS

# Words in a noun phrase that name nothing a follow-up could point back to.
_EMPTY = {"PRON", "DET", "PUNCT", "ADV"}
_PARTICLE = {"ADP", "PART"}


def entity_of(question: str) -> str:
    """The first run of capitalised words after the first word ("Kestrel Pay"), else its first
    noun phrase that is not a pronoun or wh-word, without determiners ("the billing service" →
    "billing service"). A question's last noun right before a stranded preposition is read as the
    verb the tagger took it for ("what does the scheduler depend on?" → "scheduler")."""
    tagged = tag_text(question)
    named = _capitalised_run(tagged)
    if named:
        return named
    phrases = []
    for start, end in noun_phrases(tagged):
        words = [
            (i, w, t)
            for i, (w, t) in enumerate(tagged[start:end], start)
            if t not in _EMPTY and w.lower() not in WH_AND_QUANTIFIERS
        ]
        if (
            len(words) > 1
            and words[-1][0] + 1 < len(tagged)
            and tagged[words[-1][0] + 1][1] in _PARTICLE
            and words[-1][0] + 2 >= len(tagged) - 1
        ):
            words.pop()
        if words:
            phrases.append(words)
    return " ".join(w for _, w, _ in phrases[0]) if phrases else ""


def _capitalised_run(tagged: list[tuple[str, str]]) -> str:
    """The first run of capitalised words after the question's first word: a name, whatever tag an
    unknown name got (the tagger reads "What is Tern?" with Tern as an adjective)."""
    run: list[str] = []
    for word, tag in tagged[1:]:
        if word[:1].isupper() and tag != "PUNCT" and word.lower() not in WH_AND_QUANTIFIERS:
            run.append(word)
        elif run:
            break
    return " ".join(run)
