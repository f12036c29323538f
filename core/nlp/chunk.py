"""Noun-phrase chunks over UPOS tags, with nltk's RegexpParser.

A chunk is a maximal run a reader would call one noun phrase: an optional determiner, numbers,
adjectives and adverbs before one or more nouns or proper nouns ("the two old Roman roads",
"Marie Curie"), a possessive inside ("Marie Curie 's laboratory"), or numbers alone ("1903",
"12 May 1903" is a date chunk because May is a PROPN), and after a determiner a participle
the tagger calls VERB ("a refurbished notebook"). A name with a number ("Boeing 747", "Apollo
11") before a common noun modifies it, like any name: "the two Boeing 747 freighters" is one
phrase headed by "freighters", not "the two Boeing 747" and "freighters". Pronouns are not
chunks: callers that resolve them see the PRON tag directly.

The parser's modules are loaded on the first call, without `import nltk` (core/infra/submodule.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from core.infra.submodule import import_submodule
from core.nlp.lazy import Lazy

if TYPE_CHECKING:
    from nltk.chunk.regexp import RegexpParser

GRAMMAR = r"""
NP: {<DET><ADV>*<VERB><ADJ|NUM>*<NOUN|PROPN>+}
    {<DET>?<NUM|ADJ|ADV>*<NOUN|PROPN>*<PROPN><NUM>+<NOUN>+}
    {<DET>?<NUM|ADJ|ADV>*<NOUN|PROPN>+(<PART><ADJ|NUM>*<NOUN|PROPN>+)*<NUM>*}
    {<DET>?<NUM>+}
"""


def _parser() -> RegexpParser:
    # Parsing calls none of: nltk.chunk.util's scoring (nltk.metrics.scores, which imports
    # nltk.util) and corpus tag maps (nltk.tag.mapping: nltk.data, featstruct, logic), Tree's
    # grammar productions (nltk.grammar), nltk.internals' checks of file paths and downloads
    # (nltk.pathsec: urllib.request, http, ssl, email). Their imports were most of the chunker's
    # (issue 41).
    regexp = import_submodule(
        "nltk.chunk.regexp", unused=("nltk.metrics.scores", "nltk.tag.mapping", "nltk.grammar", "nltk.pathsec")
    )
    return regexp.RegexpParser(GRAMMAR)


_PARSER: Lazy[RegexpParser] = Lazy(_parser)


def noun_phrases(tagged: Sequence[tuple[str, str]]) -> list[tuple[int, int]]:
    """(start, end) word spans of the noun phrases of one tagged sentence, end exclusive."""
    if not tagged:
        return []
    tree = _PARSER.get().parse([(word or "_", tag) for word, tag in tagged])
    spans, position = [], 0
    for child in tree:
        if isinstance(child, tuple):
            position += 1
            continue
        spans.append((position, position + len(child)))
        position += len(child)
    return spans
