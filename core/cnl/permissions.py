"""The permission-label grammar: the fail-closed side of every reader (docs/security.md).

A permission field that a reader does not read as one would publish the unit it was meant to
restrict. So every format names its *label positions* and asks here whether a label stands there:

- `permission_line`: the start of a line, after indentation and any run of list bullets
  (`- * + 1. 1)`), quote and comment leaders (`> // ; # <!--`), heading marks, task boxes and
  emphasis; a Markdown table row's cells (`| Acl | staff |`);
- `permission_label`: a name that is a label by its place (a field name, a front-matter key, a
  JSON key at any depth, a SOP token);
- `permission_heading`: a unit heading's text (`## Context Unit x (Acl: staff)`, a SOP id);
- `permission_inline`: running prose, where only the unambiguous names count.

A name is compared in its canonical form (core/cnl/canonical.py: NFKC, default-ignorables
removed, case folded, UTS #39 confusable prototypes) with every character but letters and digits
dropped, so `ACL`, `A.C.L.`, `Аcl` (Cyrillic А), `Ac\u3164l`, `Effective-To` are one name. What
counts as a label:

- at a label position, followed by a separator whose canonical form is `:` or `=` (`Acl：`,
  `Acl∶`, `Acl꞉`, `Region =`): a permission field's name, its plural, a name within one edit of
  `Region`, `EffectiveFrom` or `EffectiveTo` (a transposed or doubled letter of `Acl`), a name
  starting `effective`, `valid` or `expir`, or a synonym (`SYNONYMS`);
- at a label position with no such separator (`Acl staff`, `Acl፡ staff`): the unambiguous names
  only (`UNAMBIGUOUS`) written as one token, then a short value (at most six words, not ending a
  sentence); English words (`Region`, `Audience`, `valid to`) need a separator;
- inside running prose: an unambiguous name directly before `:` or `=` and a value (`Note — acl:
  staff`), not after an article or preposition ("Edit the ACL: …"), not in a URL's query; and
  `region` only before `=` (`(Region=EU)`): "… grouped into four regions: Finland, …" is prose.
"""

from __future__ import annotations

import re
from functools import lru_cache

from core.cnl.canonical import canonical_forms, original_offset
from core.text.words import PROSE_BEFORE_NAME

FIELDS = ("Acl", "Region", "EffectiveFrom", "EffectiveTo")
# Canonical keys that are never an English word: a label wherever a name may stand, even with no
# separator, and inside running prose.
UNAMBIGUOUS: dict[str, str] = {
    **dict.fromkeys(
        (
            "acl",
            "acls",
            "acll",
            "alc",
            "acllist",
            "acltag",
            "acltags",
            "accesscontrollist",
            "accesscontrol",
            "accesslist",
            "accesstags",
        ),
        "Acl",
    ),
    **dict.fromkeys(("effectivefrom", "validfrom", "effectivestart", "effectivesince"), "EffectiveFrom"),
    **dict.fromkeys(
        ("effectiveto", "effectiveuntil", "effectivetill", "effectiveend", "validuntil", "validtill", "validthrough"),
        "EffectiveTo",
    ),
}
# Words that are a permission field only at a label position with a separator (`Audience: staff`).
SYNONYMS: dict[str, str] = {
    **dict.fromkeys(
        (
            "tag",
            "tags",
            "audience",
            "audiences",
            "visibility",
            "visibleto",
            "group",
            "groups",
            "roles",
            "allowed",
            "allowedgroups",
            "allowedroles",
            "allowedtags",
            "allowedusers",
            "permission",
            "permissions",
            "access",
            "accessgroups",
            "restrictedto",
            "clearance",
            "readers",
        ),
        "Acl",
    ),
    **dict.fromkeys(("region", "regions"), "Region"),
    **dict.fromkeys(
        ("effective", "effectivedate", "embargo", "embargountil", "publishfrom", "notbefore"), "EffectiveFrom"
    ),
    **dict.fromkeys(
        ("expires", "expiry", "expiration", "expirationdate", "expireson", "expireby", "validto", "notafter"),
        "EffectiveTo",
    ),
}
_NEAR = {"region": "Region", "effectivefrom": "EffectiveFrom", "effectiveto": "EffectiveTo"}
_DATE_PREFIXES = ("effective", "valid", "expir")
_DATE_ENDS = ("to", "until", "till", "through", "thru", "end", "ends", "expires", "after")
_MAX_NAME_WORDS = 4
_MAX_BARE_VALUE_WORDS = 6
# Leaders before a label at a line start: indentation, any run of marks that are not letters or
# digits (bullets, quote and comment leaders `> // ; # <!--`, heading marks, emphasis, invisible
# characters), list numbers and task boxes, in any order.
_LEADER = re.compile(r"(?:\s+|[^\w\s]+|_+|\d{1,3}[.)]|\[[ xX]\])*")
_CELL_BARS = ("|", "\uff5c")
_CELL_SPLIT = re.compile("[|\uff5c]")
# A name of up to four words, then any emphasis closing it, then a separator run.
_NAMED = re.compile(r"(?P<name>[^\W_](?:[^\W_]|[ \t_.\-/'](?=[^\W_])){0,48}?)[ \t*_`~]*(?P<sep>[:=]+)")
# With no separator, a name written as one token (`EffectiveFrom`, `valid_until`), not two words.
_BARE = re.compile(r"[^\W_]+(?:[_.\-][^\W_]+){0,3}")
# Most lines: no separator, and no bare unambiguous name first (decided at C speed, ASCII only).
_ASCII_BARE = re.compile(r"[^A-Za-z0-9]{0,16}(?:\d{1,3}[.)][^A-Za-z0-9]{0,8})?(?i:a\W?c|a\W?l|e\W?f|v\W?a)")
_PREFIX_CHARS = 160


@lru_cache(maxsize=8192)
def name_keys(name: str) -> tuple[str, ...]:
    """The canonical keys of a written name: its canonical forms, letters and digits only. Cached:
    a file's field names repeat on every unit (a 1 MB file of `Claim:` lines asked 222k times)."""
    return tuple(dict.fromkeys("".join(c for c in form if c.isalnum()) for form in canonical_forms(name)))


def fold(name: str) -> str:
    return name_keys(name)[0]


@lru_cache(maxsize=8192)
def permission_label(name: str) -> str | None:
    """The permission field (`Acl`, `Region`, `EffectiveFrom`, `EffectiveTo`) a name written at a
    label position with a separator reads like, or None."""
    for key in name_keys(name):
        label = _classify(key)
        if label is not None:
            return label
    return None


def _classify(key: str) -> str | None:
    if not key or not key[0].isalpha():
        return None
    found = UNAMBIGUOUS.get(key) or SYNONYMS.get(key)
    if found is not None:
        return found
    if key.startswith(_DATE_PREFIXES):
        return "EffectiveTo" if key.endswith(_DATE_ENDS) else "EffectiveFrom"
    for near, label in _NEAR.items():
        if one_edit(key, near):
            return label
    return None


def _bare_label(name: str) -> str | None:
    """The field an unambiguous name stands for with no separator after it."""
    for key in name_keys(name):
        found = UNAMBIGUOUS.get(key)
        if found is None and len(key) > 6:
            found = next((label for near, label in _NEAR.items() if len(near) > 6 and one_edit(key, near)), None)
        if found is not None:
            return found
    return None


def one_edit(word: str, target: str) -> bool:
    """Whether `word` is `target` with one letter inserted, deleted, replaced, or two adjacent
    letters swapped (Damerau-Levenshtein distance 1)."""
    if word == target or abs(len(word) - len(target)) > 1:
        return False
    if len(word) == len(target):
        diffs = [i for i, (a, b) in enumerate(zip(word, target)) if a != b]
        return len(diffs) == 1 or (
            len(diffs) == 2
            and diffs[1] == diffs[0] + 1
            and word[diffs[0]] == target[diffs[1]]
            and word[diffs[1]] == target[diffs[0]]
        )
    short, long = sorted((word, target), key=len)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def permission_line(line: str) -> tuple[str, str, int] | None:
    """(name as written, the field it reads like, 1-based column) when a label stands at the
    start of `line` (or at a table row's cell), else None."""
    if line.isascii() and ":" not in line and "=" not in line and "|" not in line and not _ASCII_BARE.match(line):
        return None  # most lines: decided at C speed
    head = line[:_PREFIX_CHARS]
    if head.lstrip().startswith(_CELL_BARS):
        return _table_row(head)
    return label_at(head, _leader_end(head))


def _leader_end(text: str) -> int:
    leader = _LEADER.match(text)
    assert leader is not None  # `*` matches the empty string
    return leader.end()


def label_at(text: str, at: int) -> tuple[str, str, int] | None:
    """(name as written, field, 1-based column in `text`) of a label starting at `text[at]`."""
    rest = text[at:]
    for index, form in enumerate(canonical_forms(rest)):
        found = _form_label(form)
        if found is not None:
            start, end, label = found
            first = original_offset(rest, start, index)
            last = max(original_offset(rest, end - 1, index) + 1, first + 1)
            return rest[first:last].strip(), label, at + first + 1
    return None


def _form_label(form: str) -> tuple[int, int, str] | None:
    """(start, end, field) of the label a canonical text starts with: a name and a separator,
    or an unambiguous name and a short value."""
    named = _NAMED.match(form)
    if named is not None and len(named.group("name").split()) <= _MAX_NAME_WORDS:
        label = permission_label(named.group("name"))
        if label is not None:
            return named.start("name"), named.end("name"), label
    bare = _BARE.match(form)
    if bare is None:
        return None
    label = _bare_label(bare.group())
    rest = form[bare.end() :].strip(" \t*_`~")
    if label is None or not rest or len(rest.split()) > _MAX_BARE_VALUE_WORDS or rest[-1] in ".!?":
        return None
    return bare.start(), bare.end(), label


def _table_row(row: str) -> tuple[str, str, int] | None:
    """A table row one of whose cells starts with a label: a name alone (`| Acl | staff |`) or a
    name with its separator (`| Acl: staff |`)."""
    offset = 0
    for cell in _CELL_SPLIT.split(row):
        name = cell.strip(" \t*_`~").rstrip(":=").strip()
        if name and len(name.split()) <= _MAX_NAME_WORDS and (label := permission_label(name)) is not None:
            return name, label, offset + cell.index(name) + 1
        found = label_at(cell, _leader_end(cell))
        if found is not None:
            return found[0], found[1], offset + found[2]
        offset += len(cell) + 1
    return None


# Inside running prose: a separator with a value after it, and the word (or `Effective From`-like
# pair) directly before it, not inside a URL query (`?region=eu`). Found from the separators of the
# raw text back, canonicalising only the few characters before each, so a long text costs one
# scan, not a canonical copy of all of it.
_SEPARATOR_CANDIDATE = re.compile(r"[:=]|[^\x00-\x7f]")
_VALUE_AFTER = re.compile(r"(?![:=/])[ \t]*\S")
_INLINE_NAME = re.compile(
    r"(?<![\w.\-/?&])(?P<name>(?:(?:effective|valid|not)[ \t]+)?[^\W\d_][\w.\-]{0,24})[ \t*_`]*\Z"
)
_NAME_REACH = 48
_ALNUM = re.compile(r"[\W_]")


def permission_inline(line: str) -> tuple[str, str, int] | None:
    """(name as written, the field it reads like, 1-based column) for the first unambiguous
    permission field written inside running prose `line`, else None."""
    if line.isascii() and ":" not in line and "=" not in line:
        return None
    return _inline(line, strict=False)


def permission_heading(text: str) -> tuple[str, str, int] | None:
    """`permission_inline` for a unit heading's text or a SOP id: not prose, so every label with
    a separator counts there (`## Context Unit x (Region: EU)`)."""
    if text.isascii() and ":" not in text and "=" not in text:
        return None
    return _inline(text, strict=True)


def _inline(line: str, *, strict: bool) -> tuple[str, str, int] | None:
    for separator in _SEPARATOR_CANDIDATE.finditer(line):
        char, at = separator.group(), separator.start()
        kind = char if char in ":=" else _read_as(char)
        if kind not in (":", "=") or not _VALUE_AFTER.match(line, at + 1):
            continue
        start = max(0, at - _NAME_REACH)
        found = _name_before(line[start:at], kind, strict)
        if found is not None:
            name, label, col = found
            return name, label, start + col
    return None


@lru_cache(maxsize=4096)
def _read_as(char: str) -> str:
    """What one non-ASCII character reads as (`:` for `：`). Cached: a text in another script has
    one candidate per character (a 1 MB file of one mark had cost 3 CPU s)."""
    return canonical_forms(char)[0]


def _name_before(head: str, kind: str, strict: bool) -> tuple[str, str, int] | None:
    """The permission name `head` ends with (before a separator of `kind`), if any."""
    for index, form in enumerate(canonical_forms(head)):
        match = _INLINE_NAME.search(form)
        if match is None:
            continue
        name = match.group("name")
        label = permission_label(name) if strict else _bare_label(name)
        if label is None and not strict and kind == "=" and _ALNUM.sub("", name) in ("region", "regions"):
            label = "Region"
        if label is None:
            continue
        before = form[: match.start()].split()
        if not strict and before and before[-1].strip("([{\"'") in PROSE_BEFORE_NAME:
            continue
        first = original_offset(head, match.start(), index)
        last = original_offset(head, match.end("name") - 1, index) + 1
        return head[first:last], label, first + 1
    return None


# A comment that is a field line names one field: a word (`Acl`, `effective-to`), or `Effective
# From/To`. "# Region-only unit: …" or "# (effectiveFrom <= as-of date)" talk about permissions.
_COMMENT_NAME = re.compile(r"[^\W\d_][\w-]*(?:[ \t]+(?:from|to))?", re.IGNORECASE)


def permission_comment(line: str) -> tuple[str, str, int] | None:
    """`permission_line` for a comment line (`# Acl: staff`, `# - region = EU`), where prose about
    permissions is expected: only a line that is a field line counts, a sentence about one does not."""
    found = permission_line(line)
    return found if found is not None and _COMMENT_NAME.fullmatch(canonical_forms(found[0])[0]) else None


def unread_message(name: str, label: str, where: str) -> str:
    """The error for a permission-like line or key that is not read as the field."""
    hint = f"did you mean {label!r}? " if fold(name) != fold(label) else f"write it as the unit's {label} field; "
    return (
        f"{name!r} looks like a permission field but is not read as one {where}; {hint}"
        "the unit is withdrawn until this is fixed (fail closed)"
    )
