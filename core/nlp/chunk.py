"""Noun-phrase chunks over UPOS tags: nltk's RegexpParser's decisions, without importing nltk.

A chunk is a maximal run a reader would call one noun phrase: an optional determiner, numbers,
adjectives and adverbs before one or more nouns or proper nouns ("the two old Roman roads",
"Marie Curie"), a possessive inside ("Marie Curie 's laboratory"), or numbers alone ("1903",
"12 May 1903" is a date chunk because May is a PROPN), and after a determiner a participle
the tagger calls VERB ("a refurbished notebook"). Pronouns are not chunks: callers that
resolve them see the PRON tag directly.

`GRAMMAR` is an nltk RegexpParser grammar, and `noun_phrases` applies it as RegexpParser does:
each rule in turn, leftmost-longest, over the words no earlier rule chunked. It does so with
`re` over one letter per tag, since `import nltk` costs 1–2 s (core/text.py has the story) and a
question whose sentence says "he" must not pay it; tests/core/test_nlp_chunk.py checks that the
chunks are nltk's on UD English EWT sentences.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

GRAMMAR = r"""
NP: {<DET><ADV>*<VERB><ADJ|NUM>*<NOUN|PROPN>+}
    {<DET>?<NUM|ADJ|ADV>*<NOUN|PROPN>+(<PART><ADJ|NUM>*<NOUN|PROPN>+)*<NUM>*}
    {<DET>?<NUM>+}
"""

# One letter per tag the grammar names; every other tag is "x".
_LETTER = {"DET": "D", "ADV": "R", "VERB": "V", "ADJ": "J", "NUM": "C", "NOUN": "N", "PROPN": "P", "PART": "T"}


def _compile(grammar: str) -> list[re.Pattern[str]]:
    """The grammar's chunk rules as patterns over the letters: <A|B> → [ab], the rest as written."""
    rules = re.findall(r"\{([^}]*)\}", grammar)

    def tags(match: re.Match[str]) -> str:
        return "[" + "".join(_LETTER[t] for t in match.group(1).split("|")) + "]"

    return [re.compile(re.sub(r"<([A-Z|]+)>", tags, rule)) for rule in rules]


_RULES = _compile(GRAMMAR)


def noun_phrases(tagged: Sequence[tuple[str, str]]) -> list[tuple[int, int]]:
    """(start, end) word spans of the noun phrases of one tagged sentence, end exclusive."""
    letters = "".join(_LETTER.get(tag, "x") for _, tag in tagged)
    spans: list[tuple[int, int]] = []
    for rule in _RULES:
        free, start = [], 0
        for first, end in sorted(spans):
            free.append((start, first))
            start = end
        free.append((start, len(letters)))
        for low, high in free:
            spans += [(low + m.start(), low + m.end()) for m in rule.finditer(letters[low:high]) if m.end() > m.start()]
    return sorted(spans)
