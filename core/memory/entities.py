"""What a question is about: the thing a later "it" or "And X?" points back to."""

from __future__ import annotations

from core.nlp.chunk import noun_phrases
from core.nlp.tagger import tag_text

# Noun phrases made only of these word classes name nothing a follow-up could point back to.
_EMPTY = {"PRON", "DET", "PUNCT"}
_WH = {"what", "which", "who", "whom", "whose", "where", "when", "why", "how"}


def entity_of(question: str) -> str:
    """The question's first noun phrase with a proper noun, else its first noun phrase that is not a
    pronoun or wh-word; leading determiners dropped ("the billing service" → "billing service")."""
    tagged = tag_text(question)
    phrases = []
    for start, end in noun_phrases(tagged):
        words = [(w, t) for w, t in tagged[start:end] if t not in _EMPTY and w.lower() not in _WH]
        if words:
            phrases.append(words)
    named = next((p for p in phrases if any(t == "PROPN" for _, t in p)), None)
    chosen = named or (phrases[0] if phrases else [])
    return " ".join(w for w, _ in chosen)
