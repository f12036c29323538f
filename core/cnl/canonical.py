"""The canonical form a permission label is recognised by (docs/security.md, "Readers fail closed").

Two strings that a reader of the file cannot tell apart must name the same field. So each
character is put through NFKC, dropped when it is a default-ignorable code point (zero-width
characters, Hangul fillers such as U+3164, variation selectors: Unicode's own property, through
the `regex` module), case folded and mapped to its confusable prototype from Unicode's
confusables.txt (UTS #39), as shipped by the `confusable-homoglyphs` package. Its data pairs each
character with its look-alikes both ways, so a character's prototype is the representative of
its look-alike class: a lowercase ASCII letter when the class has one, else an ASCII character,
else the lowest code point. `:` and `=` are their classes' only ASCII members, so every look-alike
of a separator canonicalises to one of them.

UTS #39 is case-sensitive (capital `I` is a look-alike of `l`, small `i` is not), so a name is
read in two forms: prototypes before case folding (`AcI` → `acl`) and after (`EFFECTIVE` keeps
its `i`). A name matches when either form does.

The table (about 9,600 characters) costs ~0.2 s to build, so it is built on first need: ASCII
text is mapped by the table's ASCII part (`ASCII_FOLD_FIRST`, `ASCII_PROTOTYPE`; a test derives
them from the library's data), so every reader's common case stays at C speed.
"""

from __future__ import annotations

import json
import re
import unicodedata
from bisect import bisect_right
from functools import lru_cache
from itertools import accumulate
from pathlib import Path


@lru_cache(maxsize=1)
def _ignorable():
    """Unicode's Default_Ignorable_Code_Point property; `regex` costs ~45 ms to import, so only
    text that leaves ASCII pays for it."""
    import regex

    return regex.compile(r"\p{Default_Ignorable_Code_Point}")


# The table restricted to ASCII, so that ASCII text never builds it: the ASCII characters whose
# prototype is another character, before and after case folding. A test derives both from the
# library's data and checks they are these.
ASCII_FOLD_FIRST = str.maketrans({"1": "l", "|": "l", "`": "'"})
ASCII_PROTOTYPE = str.maketrans({"1": "l", "|": "l", "`": "'", "I": "l", "O": "0"})


_DIRECTION_MARKS = str.maketrans("", "", "\u200e\u200f")


@lru_cache(maxsize=1)
def prototypes() -> dict[str, str]:
    """Each character of Unicode's confusables data → its look-alike class's representative."""
    import confusable_homoglyphs  # its package holds the data file; its modules load more than this needs

    raw = json.loads(Path(confusable_homoglyphs.__file__).with_name("confusables.json").read_text("utf-8"))
    parent: dict[str, str] = {}

    def root(char: str) -> str:
        while parent.setdefault(char, char) != char:
            parent[char] = parent[parent[char]]
            char = parent[char]
        return char

    for key, homoglyphs in raw.items():
        source = key.translate(_DIRECTION_MARKS)  # the package wraps right-to-left entries in them
        for entry in homoglyphs:
            target = entry["c"].translate(_DIRECTION_MARKS)
            if len(source) == 1 and len(target) == 1:
                parent[root(source)] = root(target)
    classes: dict[str, list[str]] = {}
    for char in parent:
        classes.setdefault(root(char), []).append(char)
    table = {}
    for members in classes.values():
        best = min(members, key=lambda c: (not (c.isascii() and c.islower()), not c.isascii(), c))
        table.update(dict.fromkeys(members, best))
    return table


def _prototype(text: str) -> str:
    table = prototypes()
    return "".join(table.get(char, char) for char in text)


class _Table(dict):
    """A `str.translate` table filled on first sight of each character."""

    def __init__(self, fold_first: bool):
        super().__init__()
        self.fold_first = fold_first

    def __missing__(self, code: int) -> str:
        table = prototypes()
        written = chr(code).casefold() if self.fold_first else chr(code)
        # Prototypes before NFKC too: NFKC turns some look-alikes into other characters (U+FE30
        # PRESENTATION FORM FOR VERTICAL TWO DOT LEADER, a look-alike of `:`, into U+2025).
        out = []
        for char in unicodedata.normalize("NFKC", "".join(table.get(c, c) for c in written)):
            if _ignorable().match(char):
                continue
            if self.fold_first:
                out.append(_prototype(char.casefold()))
            else:
                out.append(_prototype(_prototype(char).casefold()))
        self[code] = mapped = "".join(map(_latin_letter, _named_separator("".join(out))))
        return mapped


# A Latin letter that is another letter with a mark or in another style (`é`, `ᴀ` LATIN LETTER
# SMALL CAPITAL A, `ƚ` … WITH BAR, `Ⓛ` once NFKC made it `L`) reads as that letter: `Régïon`,
# `ᴀᴄʟ` and `A\u0301cl` are a reader's `Region` and `ACL`. By the letter's Unicode name, as
# `_named_separator` reads signs: confusables.txt pairs few of these with an ASCII letter.
_LATIN_NAME = re.compile(r"LATIN (?:SMALL |CAPITAL )?LETTER (?:SMALL CAPITAL )?([A-Z])(?: WITH .*)?")
_BLANK_SIGNS = frozenset("\u2800")  # BRAILLE PATTERN BLANK: drawn as nothing, like U+3164


def _latin_letter(char: str) -> str:
    if char.isascii():
        return char
    if char in _BLANK_SIGNS or unicodedata.category(char) == "Mn":
        return ""  # a blank glyph, or a combining mark NFKC left on its own
    named = _LATIN_NAME.fullmatch(unicodedata.name(char, ""))
    return named.group(1).lower() if named else char


def _named_separator(char: str) -> str:
    """A sign confusables.txt pairs with no single ASCII character, read as a separator when a
    reader could take it for one: a math or modifier sign Unicode names as a colon or an equals
    sign (`≔` COLON EQUALS, `≕`, `⩴`) as the one its name says, and any other punctuation of a
    script's own (`፡` ETHIOPIC WORDSPACE, `·`) as `:`, so that `Region፡ EU` at a label position is
    a label (fail closed: an English field name followed by a non-ASCII mark is not prose)."""
    if len(char) != 1 or char.isascii():
        return char
    category, words = unicodedata.category(char), set(unicodedata.name(char, "").split())
    if category in ("Sm", "Sk", "Po") and {"EQUAL", "EQUALS"} & words:
        return "="
    return ":" if category == "Po" or (category in ("Sm", "Sk") and "COLON" in words) else char


_FOLD_FIRST = _Table(fold_first=True)
_PROTOTYPE_FIRST = _Table(fold_first=False)


class _NfkcFirst(dict):
    """A `str.translate` table: NFKC before any prototype. The confusables data pairs some
    compatibility characters with a look-alike that is no letter (`Ⓒ` with `©`, `ⓛ` with `ⓘ`),
    so `ⒶⒸⓁ`, which NFKC reads as `ACL`, needs NFKC first."""

    def __missing__(self, code: int) -> str:
        self[code] = mapped = unicodedata.normalize("NFKC", chr(code)).translate(_FOLD_FIRST)
        return mapped


_NFKC_FIRST = _NfkcFirst()
_TABLES = (_FOLD_FIRST, _PROTOTYPE_FIRST, _NFKC_FIRST)


def canonical_forms(text: str) -> tuple[str, ...]:
    """`text`'s canonical forms: prototypes after case folding, then before, then after NFKC;
    one when they agree (form number N is read through `_TABLES[N]`)."""
    if text.isascii():
        first = text.casefold().translate(ASCII_FOLD_FIRST)
        second = text.translate(ASCII_PROTOTYPE).casefold().translate(ASCII_PROTOTYPE)
        return (first,) if first == second else (first, second)
    first = text.translate(_FOLD_FIRST)
    second = first if _case_sensitive().isdisjoint(text) else text.translate(_PROTOTYPE_FIRST)
    third = text.translate(_NFKC_FIRST)
    if third != first:
        return (first, second, third)
    return (first,) if first == second else (first, second)


@lru_cache(maxsize=1)
def _case_sensitive() -> frozenset[str]:
    """The characters whose two readings differ (capital I and its look-alikes: `Ｉ`, `Ι`, `𝐈`):
    only a text holding one needs its second form."""
    return frozenset(
        char for char in prototypes() if _prototype(char.casefold()) != _prototype(_prototype(char).casefold())
    )


class _FormLengths(dict):
    """How many characters one character becomes in a canonical form (0 for an ignorable one),
    filled on first sight, so that `original_offset` sums lengths at C speed."""

    def __init__(self, table: dict[int, str]):
        super().__init__()
        self.table = table

    def __missing__(self, char: str) -> int:
        self[char] = length = len(char.translate(self.table))
        return length


_FORM_LENGTHS = tuple(_FormLengths(table) for table in _TABLES)
# Labels sit near a text's start: the lengths are summed over a prefix first, the whole text only
# when the offset lies past it.
_OFFSET_SLACK = 32


def original_offset(text: str, offset: int, form: int = 0) -> int:
    """The index in `text` of the character whose canonical form number `form` holds that form's
    character at `offset`."""
    if text.isascii():
        return offset
    lengths = _FORM_LENGTHS[form].__getitem__
    prefix = text[: 2 * offset + _OFFSET_SLACK]
    index = bisect_right(list(accumulate(map(lengths, prefix))), offset)
    if index < len(prefix) or len(prefix) == len(text):
        return index
    return bisect_right(list(accumulate(map(lengths, text))), offset)
