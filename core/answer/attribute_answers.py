"""Adjectives that answer "what X?" when X is an attribute: "marked blue" answers "What colour
…?", "metallic" answers "What material …?", "tiny" answers "What size …?".

The noun phrase spans of a sentence (core/question/typed_spans.py) hold no bare adjective, so a colour
said as one was never a lead. An adjective is of the asked attribute when the lexicon files the
same word as a noun (blue, the colour), or a noun it derives (tiny → tininess), under X in one
of its commonest senses: WordNet's chromatic colour hyponyms, its substances and materials, its
sizes, not a word list.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from core.nlp.tagging import Token
from core.question.answer_types import AnswerType, Expected
from core.question.typed_spans import Span

# The noun senses read for an adjective's class: its commonest (blue → colour, not the rarer
# blue → "bluing", a material).
_SENSES = 2
# How far above the adjective's noun the asked class may be: a colour is two steps above "blue";
# every noun is an "entity" some ten steps up, which asks for no attribute.
_DEPTH = 4
# What an attribute question asks for, by the lexicon: a property (colour, size, texture,
# temperature) or a kind of matter (material, metal), in one of the head's commonest senses.
# "What entity …", "What effect …", "What system …" ask for a thing, which an adjective is not.
_ATTRIBUTES = frozenset(("property", "matter"))
_HEAD_DEPTH = 20
# WordNet's class of every material and substance. A question asking for matter in general
# ("what material …?", "what substance …?") is answered by any noun of matter: WordNet files
# steel under alloy, glass under solid and leather under material, all under matter, so "a kind
# of material" alone would refuse "stainless steel". A head that is itself one material asks for
# its own kinds ("what wood" → oak), as does "colour", whose commonest sense there is a dye.
_MATTER = "matter"
_ONE_MATERIAL = "material"


def attribute_spans(tokens: Sequence[Token], text: str, expected: Expected, typed: Sequence[Span]) -> list[Span]:
    """The sentence's adjectives that are a kind of the asked X ("blue" asked "what colour"); asked
    "what size" (a number), only where the sentence gives no number (`typed`): "40 cm" says
    more than "large"."""
    head = expected.head
    if not head or not _asks_attribute(expected, typed):
        return []
    return [
        Span(text[token.start : token.end], i, i)
        for i, token in enumerate(tokens)
        if token.tag == "ADJ" and attribute_link(token.word, head)
    ]


@lru_cache(maxsize=8192)
def attribute_link(word: str, head: str) -> str | None:
    """Why the adjective `word` is a kind of `head` ("blue → colour"), or None."""
    from core.nlp import lexicon_or_none

    lex = lexicon_or_none()
    if lex is None or not word.isalpha() or not head:
        return None
    if not _ATTRIBUTES & lex.classes(head.lower(), "n", depth=_HEAD_DEPTH, senses=_SENSES):
        return None
    wanted = {head.lower(), *lex.synonyms(head.lower(), "n")}
    lower = word.lower()
    # A derived noun counts in its commonest sense only: "important" derives "grandness", a size
    # in a rarer one.
    readings = [(lower, _SENSES), *((noun, 1) for noun in sorted(lex.derivations(lower, "a")) if " " not in noun)]
    for noun, senses in readings:
        if wanted & lex.classes(noun, "n", depth=_DEPTH, senses=senses):
            via = "" if noun == lower else f" ({noun})"
            return f"{lower}{via} \u2192 {head.lower()}"
    return None


@lru_cache(maxsize=8192)
def matter_link(noun: str, head: str) -> str | None:
    """Why the noun answers "what X" when X is a kind of matter ("steel → matter, as material
    is"), or None."""
    from core.nlp import lexicon_or_none

    lex = lexicon_or_none()
    if lex is None or not noun.isalpha() or not asks_matter(head):
        return None
    if _MATTER not in lex.classes(noun.lower(), "n", depth=_HEAD_DEPTH, senses=_SENSES):
        return None
    return f"{noun.lower()} \u2192 {_MATTER}, as {head.lower()} is"


@lru_cache(maxsize=1024)
def asks_matter(head: str) -> bool:
    """ "What X …?" asks for matter in general: the lexicon files X, in its commonest sense, under
    matter and not under one material ("material", "substance", "metal"; not "wood", "colour")."""
    from core.nlp import lexicon_or_none

    lex = lexicon_or_none()
    if lex is None or not head:
        return False
    classes = lex.classes(head.lower(), "n", depth=_HEAD_DEPTH, senses=1)
    return _MATTER in classes and _ONE_MATERIAL not in classes


def _asks_attribute(expected: Expected, typed: Sequence[Span]) -> bool:
    return expected.type is AnswerType.KIND or (expected.type is AnswerType.NUMBER and not typed)


def is_attribute(span: Span, tokens: Sequence[Token], expected: Expected) -> bool:
    """The lead is one adjective of the asked attribute: it stands where the question's gap is."""
    if (
        expected.type not in (AnswerType.KIND, AnswerType.NUMBER)
        or span.first != span.last
        or tokens[span.first].tag != "ADJ"
    ):
        return False
    return attribute_link(tokens[span.first].word, expected.head) is not None
