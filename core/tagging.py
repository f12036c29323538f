"""Words of a sentence with their universal part-of-speech tags (UPOS) and character offsets.

Answers tag only the question and the few sentences they cite, at answer time. The tags come
from word shape and English closed classes (determiners, prepositions, pronouns, auxiliaries):
a stand-in with the interface of the trained tagger of core/nlp (issue 24 part 4), which
replaces `_classes` when it lands.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

# A number with its thousands separators, decimals, currency sign or percent; a word with inner
# hyphens or apostrophes; any other single character.
_TOKEN = re.compile(r"[$£€]?\d+(?:[.,:]\d+)*%?|\w+(?:[-'\u2019]\w+)*|[^\w\s]")

_CLOSED = {
    "DET": "a an the this that these those some any each every no another either neither all both",
    "ADP": """of in on at by for with from to into onto over under between among through during after
        before about against within without until upon across along around behind beyond near toward
        towards via per throughout despite amid inside outside beneath above below than like""",
    "CCONJ": "and or but nor yet",
    "SCONJ": "because although though while if whether since unless whereas so",
    "PRON": """i me my mine we us our ours you your yours he him his she her hers it its they them their
        theirs who whom whose which what this itself themselves himself herself""",
    "AUX": "is are was were be been being am has have had do does did can could will would shall should may might must",
    "PART": "not n't to 's",
    "ADV": "also very then there here too only just often never always still however thus hence",
}
_NUMBER_WORDS = frozenset(
    """zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
    sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred
    thousand million billion trillion dozen""".split()
)
_DIGIT = re.compile(r"\d")


@dataclass(frozen=True)
class Token:
    word: str
    tag: str
    start: int
    end: int


@lru_cache(maxsize=1)
def _closed_classes() -> dict[str, str]:
    table: dict[str, str] = {}
    for tag, words in _CLOSED.items():
        for word in words.split():
            table.setdefault(word, tag)
    return table


def tag_text(text: str) -> list[Token]:
    """The text's tokens, tagged."""
    matches = list(_TOKEN.finditer(text))
    words = [m.group() for m in matches]
    return [Token(w, t, m.start(), m.end()) for w, t, m in zip(words, _classes(words), matches)]


def _classes(words: list[str]) -> list[str]:
    closed = _closed_classes()
    tags = []
    for index, word in enumerate(words):
        lower = word.lower()
        if not any(ch.isalnum() for ch in word):
            tags.append("PUNCT")
        elif _DIGIT.search(word) or lower in _NUMBER_WORDS:
            tags.append("NUM")
        elif word[:1].isupper() and (index > 0 and words[index - 1] not in ".!?\"'(") and lower not in closed:
            tags.append("PROPN")
        elif lower in closed:
            tags.append(closed[lower])
        elif word[:1].isupper() and index + 1 < len(words) and words[index + 1][:1].isupper():
            # A sentence's first word starts a name when the next word continues it.
            tags.append("PROPN")
        elif lower.endswith("ly") and len(lower) > 4:
            tags.append("ADV")
        elif lower.endswith("ed") and len(lower) > 4 or (tags and tags[-1] in ("AUX", "PRON") and lower.endswith("s")):
            tags.append("VERB")
        else:
            tags.append("NOUN")
    return tags
