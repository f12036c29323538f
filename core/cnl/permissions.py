"""Lines and keys that look like a permission field: the fail-closed side of every reader.

A permission field that a reader does not read as one would publish the unit it was meant to
restrict. So each reader asks `permission_label` about every field name it does not read (an
unknown JSON key, a SOP field on an unknown label) and `permission_line` about every line it
reads as something other than a field (a continuation, a bullet, prose, a line after a unit
ends), and turns a hit into an error at that line that withdraws the unit. Names are compared
after NFKC, a fold of Cyrillic and Greek look-alike letters, case folding and dropping everything
but letters and digits, so `ACL`, `A.C.L.`, `Аcl` (Cyrillic А), `Effective-To` and `acls` are all
caught; misspellings of the longer names (`Regoin`, `EfectiveTo`) are caught by similarity.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from core.words import PROSE_BEFORE_NAME

# Letters that render like Latin ones; NFKC leaves them alone.
_CONFUSABLES = str.maketrans(
    "аАсСеЕоОрРхХуУіІјЈӏѕЅһԁɡкКмМнНтТвВαΑοΟρΡτΤεΕκΚνΝιΙχΧ",
    "aAcCeEoOpPxXyYiIjJlsShdgkKmMhHtTbBaAoOpPtTeEkKvNiIxX",
)
# Folded names that are an Acl: short, so matched exactly (a similarity cut-off would catch
# "act" or "tax"); `aci`/`ac1` are `AcI`/`Ac1` read with a capital I or a one for the l.
_ACL_NAMES = frozenset(
    "acl acls acll alc aci ac1 acllist acltags acltag tag tags accesslist accesscontrol accesscontrollist "
    "accesstags allowedtags".split()
)
_LONG_NAMES = {"region": "Region", "effectivefrom": "EffectiveFrom", "effectiveto": "EffectiveTo"}
_PREFIXES = (
    ("region", "Region"),
    ("effective", None),
    ("valid", None),
    ("expir", "EffectiveTo"),
)
_SIMILAR = 0.8
_MAX_NAME_WORDS = 4
# `[lead][1.][lead]name[ ]:` or `=`: the lead is whatever marks a bullet, quote, heading or
# emphasis (`- `, `> `, `### `, `**`, a BOM or zero-width character), the name at most 40 characters.
_LINE = re.compile(r"(?P<lead>[^\w:=]{0,12}(?:\d{1,3}[.)])?[^\w:=]{0,12})(?P<name>[^:=\n]{1,40}?)[ \t]*[:=]")
_NAME_JUNK = re.compile(r"[*_`\u200b-\u200d\u2060\ufeff]")


def fold(name: str) -> str:
    text = unicodedata.normalize("NFKC", name).translate(_CONFUSABLES).casefold()
    return "".join(char for char in text if char.isalnum())


@lru_cache(maxsize=4096)
def permission_label(name: str) -> str | None:
    """The permission field (`Acl`, `Region`, `EffectiveFrom`, `EffectiveTo`) `name` reads like, or None."""
    folded = fold(name)
    if not folded or not folded[0].isalpha():
        return None
    if folded in _ACL_NAMES:
        return "Acl"
    for prefix, label in _PREFIXES:
        if folded.startswith(prefix):
            return label or _date_label(folded)
    if len(folded) >= 5:
        from difflib import SequenceMatcher  # only a name no rule above decided pays for it

        for key, label in _LONG_NAMES.items():
            if SequenceMatcher(None, folded, key).ratio() >= _SIMILAR:
                return label
    return None


def _date_label(folded: str) -> str:
    ends = ("to", "until", "till", "through", "thru", "end", "ends", "expires")
    return "EffectiveTo" if folded.endswith(ends) else "EffectiveFrom"


def permission_line(line: str) -> tuple[str, str, int] | None:
    """(name as written, the field it reads like, 1-based column) when `line` reads like a
    permission field `Name: value` (or `Name = value`) behind any bullet, number, quote or
    heading mark; else None."""
    if line.lstrip().startswith("|"):
        return _table_row(line)
    if ":" not in line and "=" not in line:  # most lines: decided at C speed
        return None
    match = _LINE.match(line)
    if match is None:
        return None
    name = _NAME_JUNK.sub("", match.group("name")).strip()
    if not name or len(name.split()) > _MAX_NAME_WORDS:
        return None
    label = permission_label(name)
    if label is None:
        return None
    return name, label, match.start("name") + 1


# Inside a line (plain text only: it has no fields, so a label there can only be a field written
# in the wrong place), a single-word name, or "Effective From/To", directly before `:` or `=` and
# a value: `Note — acl: staff`, `(Region=EU)`. Only the exact names and their look-alikes count,
# and not after an article or preposition ("the region: dry and hot" is prose), nor inside a URL
# query (`?region=eu`).
_INLINE = re.compile(r"(?<![\w.\-/?&])(?P<name>(?:effective[ \t]+)?[^\W\d_][\w.\-]{0,20})[ \t]*[:=](?![:=/])[ \t]*(?=\S)",
                     re.IGNORECASE)
_INLINE_NAMES = {"acl": "Acl", "acls": "Acl", "region": "Region", "regions": "Region",
                 "effectivefrom": "EffectiveFrom", "effectiveto": "EffectiveTo"}


def permission_inline(line: str) -> tuple[str, str, int] | None:
    """(name as written, the field it reads like, 1-based column) for the first permission field
    written inside `line` (not at its start: `permission_line` decides that), else None."""
    if ":" not in line and "=" not in line:
        return None
    for match in _INLINE.finditer(line):
        name = match.group("name")
        label = _INLINE_NAMES.get(fold(name))
        if label is None:
            continue
        before = line[: match.start()].split()
        if before and fold(before[-1]) in PROSE_BEFORE_NAME:
            continue
        return name, label, match.start() + 1
    return None


# A comment that is a field line names one field: a word (`Acl`, `effective-to`), or `Effective
# From/To`. "# Region-only unit: …" or "# (effectiveFrom <= as-of date)" talk about permissions.
_COMMENT_NAME = re.compile(r"[^\W\d_][\w-]*(?:[ \t]+(?:from|to))?", re.IGNORECASE)


def permission_comment(line: str) -> tuple[str, str, int] | None:
    """`permission_line` for a comment line (`# Acl: staff`, `# - region = EU`), where prose about
    permissions is expected: only a line that is a field line counts, a sentence about one does not."""
    found = permission_line(line)
    return found if found is not None and _COMMENT_NAME.fullmatch(found[0]) else None


def _table_row(line: str) -> tuple[str, str, int] | None:
    """A Markdown table row whose first cell names a permission field (`| Acl | staff |`)."""
    cells = line.split("|")
    name = _NAME_JUNK.sub("", cells[1]).strip().rstrip(":") if len(cells) > 2 else ""
    label = permission_label(name) if name and len(name.split()) <= _MAX_NAME_WORDS else None
    return None if label is None else (name, label, line.index(cells[1]) + 1)


def unread_message(name: str, label: str, where: str) -> str:
    """The error for a permission-like line or key that is not read as the field."""
    hint = f"did you mean {label!r}? " if fold(name) != fold(label) else f"write it as the unit's {label} field; "
    return (
        f"{name!r} looks like a permission field but is not read as one {where}; {hint}"
        "the unit is withdrawn until this is fixed (fail closed)"
    )
