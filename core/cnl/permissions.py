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

What a name and a value read as is core/cnl/permission_names.py's business. What counts as a label
here, by position:

- at a label position, a name followed by a separator whose canonical form is `:` or `=` (`Acl：`,
  `Acl∶`, `Region =`), or by a weak one (a dash, an arrow or a bar between blanks, a tab: `Region -
  EU`, `Audience — staff`) and a value of the field's type; a date field's name and a date closing
  the line (`Expires 2020-01-01`); an unambiguous name written as one token and a short value
  (`Acl staff`);
- inside running prose: an unambiguous name before a separator (`Note — acl: staff`, `… Acl ->
  staff`, `… Acl:` with its value on the next line), any name before `=` or a look-alike of `:`,
  a quoted key (`{"region": "EU"}`), a date field's name before `:` and a date; after an HTML
  comment's `<!--`, and at the start of the text's last sentence (or after up to three leading
  words there) when the label's value closes the text (`… 4471. Region - EU`); not after an
  article, pronoun or preposition ("Edit the ACL: …"), not in a URL's query;
- `permission_after_lead`: a line's label after a short leading token (`Note: Region: EU`);
- `permission_across`: a label split over two lines;
- a line holding U+202E RIGHT-TO-LEFT OVERRIDE or markup is read as stored and as shown
  (core/cnl/permission_readings.py).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from core.cnl.canonical import canonical_forms, original_offset
from core.cnl.permission_names import (
    DATE_FIELDS,
    DATE_VALUE,
    DIGIT,
    MAX_NAME_WORDS,
    MAX_VALUE_WORDS,
    bare_label,
    blank_end,
    ends_with_date,
    fold,
    permission_label,
    typed_value,
)
from core.cnl.permission_readings import readings, shown_differently
from core.text.words import PROSE_BEFORE_NAME, PROSE_OPENERS

# Leaders before a label at a line start: indentation, any run of marks that are not letters or
# digits (bullets, quote and comment leaders `> // ; # <!--`, heading marks, emphasis, invisible
# characters), list numbers and task boxes, in any order.
_LEADER = re.compile(r"(?:\s+|[^\w\s]+|_+|\d{1,3}[.)]|\[[ xX]\])*")
_CELL_BARS = ("|", "\uff5c")
_CELL_SPLIT = re.compile("[|\uff5c]")
# A name of up to four words, then any emphasis closing it, then a separator run.
_NAME = r"(?P<name>[^\W_](?:[^\W_]|[ \t_.\-/'](?=[^\W_])){0,48}?)"
_NAMED = re.compile(_NAME + r"[ \t*_`~]*(?P<sep>[:=]+)")
# A weak separator, in canonical form: a dash or an arrow between blanks, or a tab (`Region - EU`,
# `Acl → staff`, `Region | EU`, `Region<TAB>EU`; U+2014 EM DASH canonicalises to U+1173, and `|` to
# its look-alike `l`, so a lone `l` between blanks is a bar). What follows one must
# read as the field's value (`typed_value`), since prose uses dashes too.
_WEAK_SEPARATOR = (
    r"(?:[ \t]*\t[ \t]*|[ \t]+(?:[\-\u1173\u2e3a\u2e3b]{1,3}>?|=>|l|[\u2192\u21d2\u27f6\u27f9\u2794\u279c])[ \t]+)"
)
_WEAK_NAMED = re.compile(_NAME + r"[*_`~]*(?P<sep>" + _WEAK_SEPARATOR + ")")
# With no separator, a name written as one token (`EffectiveFrom`, `valid_until`), not two words.
_BARE = re.compile(r"[^\W_]+(?:[_.\-][^\W_]+){0,3}")
# Most lines: no separator, and no bare unambiguous name first (decided at C speed, ASCII only).
# Date fields' names (`Expires 2020-01-01`) count too; a weak separator (` - `, a tab, `->`) is
# looked for by `_ASCII_WEAK`.
_ASCII_BARE = re.compile(
    r"[^A-Za-z0-9]{0,16}(?:\d{1,3}[.)][^A-Za-z0-9]{0,8})?(?i:a\W?c|a\W?l|e\W?f|v\W?a|exp|emb|not\W|pub)"
)
_ASCII_WEAK = re.compile(r"(?<=[^\W_])[*_`~]*[ ]+(?:-{1,3}>?|=>|\|)[ ]")


def _weak_separator(text: str, end: int) -> bool:
    """Whether `text[:end]` holds a weak separator (`in` tests first, at C speed)."""
    if "\t" in text[:end]:
        return True
    return (" -" in text or " =>" in text or " |" in text) and _ASCII_WEAK.search(text, 0, end) is not None


# A last sentence that may be a bare or dated label (`… 4411. Acl staff`, `… Expires 2020-01-01`).
_ASCII_CLOSING_HINT = re.compile(
    r"[.!?][\"')\]]* +[^A-Za-z0-9 ]{0,4}(?i:a\W?c|a\W?l|e\W?f|v\W?a|exp|emb|not\W|pub)[^.!?;]*\Z"
)
_PREFIX_CHARS = 160


def _no_label_start(text: str) -> bool:
    """True when no label can start `text`: ASCII with no separator of any kind and no name a
    bare or dated label starts with (most lines), decided at C speed."""
    return (
        text.isascii()
        and ":" not in text
        and "=" not in text
        and "|" not in text
        and not _ASCII_BARE.match(text)
        and not _weak_separator(text, _PREFIX_CHARS)
    )


def permission_line(line: str) -> tuple[str, str, int] | None:
    """(name as written, the field it reads like, 1-based column) when a label stands at the
    start of `line` (or at a table row's cell), else None."""
    if shown_differently(line[:_PREFIX_CHARS]):
        return next(filter(None, map(_line_label, readings(line[:_PREFIX_CHARS]))), None)
    return _line_label(line)


def _line_label(line: str) -> tuple[str, str, int] | None:
    if _no_label_start(line):
        return None  # most lines: decided at C speed
    head = line[:_PREFIX_CHARS]
    if head.lstrip().startswith(_CELL_BARS):
        return _table_row(head)
    return label_at(head, _leader_end(head))


_LEAD_WORD = re.compile(r"[^\W_][\w'.]*[^\w\s]*[ \t]+")
_MAX_LEAD_WORDS = 3
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*[ \t]+")  # a semicolon goes on with the sentence
_SENTENCE_GOES_ON = re.compile(r"[.!?][\"')\]]*[ \t]+[A-Z0-9]")  # another sentence after the value


def permission_after_lead(line: str) -> tuple[str, str, int] | None:
    """A label after a short leading token on a line of its own (`Note: Region: EU`, `FYI
    Expires: 2020-01-01`, `Internal note — Acl - staff`): at most three words that are not an
    article or a preposition, then a closing label (`_closing_label`)."""
    return _after_lead(line, _leader_end(line), lead_only=True)


def _after_lead(line: str, at: int, *, lead_only: bool) -> tuple[str, str, int] | None:
    """A closing label at `line[at]` (unless `lead_only`) or after up to three leading words."""
    if not lead_only and (found := _closing_label(line, at)) is not None:
        return found
    for _ in range(_MAX_LEAD_WORDS):
        word = _LEAD_WORD.match(line, at)
        if word is None:
            return None
        written = word.group().strip(" \t")
        lead = written.casefold()
        if written[-1].isalnum() and (lead in PROSE_BEFORE_NAME or lead in PROSE_OPENERS):
            return None  # "No acl and no region: …" names the fields; `A: Acl - staff` is a token
        at = word.end()
        at += len(line[at:]) - len(line[at:].lstrip(" \t-\u2013\u2014:|"))
        found = _closing_label(line, at)
        if found is not None:
            return found
    return None


def permission_value_start(text: str) -> tuple[str, str, int] | None:
    """A label opening a field's value or a document's text (`Condition: Region: EU`, a JSON
    `title` of `Region: EU`): after the field's name, as after a leading token, when its value
    closes the text."""
    if _no_label_start(text[:_PREFIX_CHARS]):
        return None
    return _closing_label(text, _leader_end(text))


def _closing_label(line: str, at: int) -> tuple[str, str, int] | None:
    """A label at `line[at]` read as at a line start, whose value closes the line: short, and no
    sentence after it (`… 4411. Region - EU`, but not `Region: EU. The vault …`)."""
    rest = line[at:]
    if (
        _no_label_start(rest)
        or rest.count(" ") >= 2 * (MAX_NAME_WORDS + MAX_VALUE_WORDS)
        or len(rest.split()) > MAX_NAME_WORDS + MAX_VALUE_WORDS
        or _SENTENCE_GOES_ON.search(rest)
    ):
        return None
    return label_at(line[:_PREFIX_CHARS] if at < _PREFIX_CHARS else line, at)


def _leader_end(text: str) -> int:
    text = text[:_PREFIX_CHARS]
    if not text.isascii():
        # A sign NFKC reads as a letter (`Ⓐ`, category So) starts the name, not the leader.
        text = "".join("a" if not c.isascii() and _reads_as_letter(c) else c for c in text)
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
    a name, a weak separator and a value of the field's type, a date field's name and a date, or
    an unambiguous name and a short value."""
    for pattern, weak in ((_NAMED, False), (_WEAK_NAMED, True)):
        named = pattern.match(form)
        if named is not None and len(named.group("name").split()) <= MAX_NAME_WORDS:
            name = named.group("name")
            label = permission_label(name)
            if label is not None and typed_value(name, form[named.end() :], weak):
                return named.start("name"), named.end("name"), label
    dated = _dated_label(form)
    if dated is not None:
        return dated
    bare = _BARE.match(form)
    if bare is None:
        return None
    label = bare_label(bare.group())
    rest = form[bare.end() :].strip(" \t*_`~")
    if label is None or not rest or len(rest.split()) > MAX_VALUE_WORDS or rest[-1] in ".!?":
        return None
    return bare.start(), bare.end(), label


def _dated_label(form: str) -> tuple[int, int, str] | None:
    """A date field's name of up to four words and then a date ending the line, with no
    separator (`Expires 2020-01-01`, `Valid until 31/12/2020`)."""
    if not DIGIT.search(form, 0, _PREFIX_CHARS):
        return None
    words = list(re.finditer(r"[^\W_]+(?:[_.\-][^\W_]+)*", form[:_PREFIX_CHARS]))
    for count, last in enumerate(words[:MAX_NAME_WORDS], start=1):
        name = form[words[0].start() : last.end()]
        if words[0].start() != 0 or not re.fullmatch(r"[^\W_]+(?:[ \t_.\-]+[^\W_]+)*", name):
            return None
        label = permission_label(name)
        if label in DATE_FIELDS and ends_with_date(form, blank_end(form, last.end())):
            return 0, last.end(), label
        if count == MAX_NAME_WORDS:
            break
    return None


def _table_row(row: str) -> tuple[str, str, int] | None:
    """A table row one of whose cells starts with a label: a name alone (`| Acl | staff |`) or a
    name with its separator (`| Acl: staff |`)."""
    offset = 0
    for cell in _CELL_SPLIT.split(row):
        name = cell.strip(" \t*_`~").rstrip(":=").strip()
        if name and len(name.split()) <= MAX_NAME_WORDS and (label := permission_label(name)) is not None:
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
_SEPARATOR_CANDIDATE = re.compile(r"[:=]|\t|[ \t](?:-{1,3}>?|=>|\|)(?=[ \t])|[^\x00-\x7f]")
_VALUE_AFTER = re.compile(r"(?![:=/])[ \t]*\S")
_BLANK_AFTER = re.compile(r"[ \t]+\S")
_REST_BLANK = re.compile(r"[ \t]*\Z")
_AFTER_FIRST_WORD = re.compile(r"(?<=\s)\S")
_CELL_HINT = re.compile(r"[|\uff5c].*[|\uff5c]")
_INLINE_NAME = re.compile(r"(?<![\w.\-/?&])(?P<name>(?:[^\W\d_]{2,12}[ \t]+)?[^\W\d_][\w.\-]{0,24})[ \t*_`:=]*\Z")
# A quoted name before a separator is a key (`{"region": "EU"}` in a text): any label counts.
_QUOTES = "\"'\u201c\u201d\u2018\u2019"
_QUOTED_KEY = re.compile(rf"[{_QUOTES}](?P<name>[^{_QUOTES}\n]{{1,48}})[{_QUOTES}][ \t]*\Z")
# An HTML comment opens a label position inside a line (`… <!-- Region: EU -->`).
_COMMENT_OPEN = re.compile(r"<!--+[ \t]*")
_NAME_REACH = 48
_ALNUM = re.compile(r"[\W_]")


def labelless(text: str) -> bool:
    """True when neither `permission_inline` nor `permission_value_start` can find a label in
    `text` (most field values: ASCII, no separator or markup, no name a bare or dated label
    starts with, first or after the last sentence's end), decided without their calls. `in`
    tests, not a regex: a regex's alternation scans a long value several times slower. False
    says only "read it"."""
    return (
        text.isascii()
        # separators and markup; a weak separator starts ` -` or a tab, `=>` and `|` hold `=`, `|`
        and not (":" in text or "=" in text or "|" in text or "\t" in text or " -" in text)
        and not ("&" in text or "<" in text or "*" in text or "~" in text)
        and _ASCII_BARE.match(text) is None
        and not (("." in text or "!" in text or "?" in text) and _ASCII_CLOSING_HINT.search(text))
    )


def may_hold_label(text: str) -> bool:
    """False for text no label can be in: ASCII with no separator of any kind (most prose)."""
    return not text.isascii() or ":" in text or "=" in text or _weak_separator(text, len(text))


def permission_inline(line: str) -> tuple[str, str, int] | None:
    """(name as written, the field it reads like, 1-based column) for the first unambiguous
    permission field written inside running prose `line`, else None."""
    if shown_differently(line):
        return next(filter(None, map(_inline_label_of, readings(line))), None)
    return _inline_label_of(line)


def _inline_label_of(line: str) -> tuple[str, str, int] | None:
    if not may_hold_label(line) and not _ASCII_CLOSING_HINT.search(line):
        return None
    return _inline(line, strict=False)


def permission_heading(text: str) -> tuple[str, str, int] | None:
    """`permission_inline` for a unit heading's text or an id: not prose, so every label with a
    separator counts there (`## Context Unit x (Region: EU)`), and each word after the id starts a
    label position (`x (Region - EU)`, `x Acl staff`, `x Expires 2020-01-01`)."""
    found = _inline(text, strict=True) if may_hold_label(text) else None
    if found is None and (words := _AFTER_FIRST_WORD.finditer(text, 0, _PREFIX_CHARS)):
        head = text[:_PREFIX_CHARS]
        found = next(
            filter(None, (label_at(head, word.start() + _leader_end(head[word.start() :])) for word in words)), None
        )
    return found


def _inline(line: str, *, strict: bool) -> tuple[str, str, int] | None:
    """The first label inside `line`: after an HTML comment's opener (a label position), or a
    name before a separator. A weak separator (a dash or an arrow between blanks, a tab) and a
    colon ending the line (the value on the next line) count after an unambiguous name only."""
    if _CELL_HINT.search(line, 0, _PREFIX_CHARS) and (found := _table_row(line[:_PREFIX_CHARS])) is not None:
        return found  # `… | Region | EU`: each cell of a row written in a text is a label position
    if "<!--" in line:
        for opener in _COMMENT_OPEN.finditer(line):
            found = label_at(line, opener.end())
            if found is not None:
                return found
    if not strict:
        # A sentence's start is a line's start when what follows closes the text: a label
        # written as the last "sentence" (`The code is 4411. Region - EU`, `… Note: Region: EU`).
        # Only the last sentences can close the text (`Acl. staff` ends two "sentences").
        for end in list(_SENTENCE_END.finditer(line, max(0, len(line) - _PREFIX_CHARS)))[-2:]:
            if line.count(" ", end.end()) > 2 * (MAX_NAME_WORDS + MAX_VALUE_WORDS):
                continue
            found = _after_lead(line, end.end(), lead_only=False)
            if found is not None:
                return found
    for separator in _SEPARATOR_CANDIDATE.finditer(line):
        char, at = separator.group(), separator.start()
        kind = _separator_kind(char)
        if kind is None:
            continue
        if kind == "weak":
            at += len(char) - len(char.lstrip(" \t")) if char.strip() else 0
            if not _BLANK_AFTER.match(line, separator.end()) and char != "\t":
                continue
            if not line[max(0, at - 4) : at].rstrip(" \t*_`")[-1:].isalpha():
                continue  # `3 - 4`, `(a) – b`: only a name ends right before a weak separator
        value = _VALUE_AFTER.match(line, at + 1) is not None
        if kind != "weak" and not value and not _REST_BLANK.match(line, at + 1):
            continue  # `::`, `:/`, `=:`: not a separator and a value
        start = max(0, at - _NAME_REACH)
        found = _name_before(line[start:at], kind, strict, line[separator.end() : separator.end() + 40], value, char)
        if found is not None:
            name, label, col = found
            return name, label, start + col
    return None


@lru_cache(maxsize=4096)
def _separator_kind(char: str) -> str | None:
    """`:` or `=` for what reads as one, "weak" for a dash, an arrow or a tab, else None."""
    if char in (":", "="):
        return char
    if char == "\t" or char.strip(" \t").startswith(("-", "=>", "|")):
        return "weak"
    read = _read_as(char)
    if read in (":", "="):
        return read
    if unicodedata.category(char) == "Pd" or char in "\u2192\u21d2\u27f6\u27f9\u2794\u279c":
        return "weak"
    return None


@lru_cache(maxsize=4096)
def _reads_as_letter(char: str) -> bool:
    return any(c.isalnum() for c in canonical_forms(char)[-1])


@lru_cache(maxsize=4096)
def _read_as(char: str) -> str:
    """What one non-ASCII character reads as (`:` for `：`). Cached: a text in another script has
    one candidate per character (a 1 MB file of one mark had cost 3 CPU s)."""
    return canonical_forms(char)[0]


def _name_before(
    head: str, kind: str, strict: bool, after: str, value: bool, separator: str = ":"
) -> tuple[str, str, int] | None:
    """The permission name `head` ends with (before a separator of `kind`, `after` following it,
    `value` whether a value follows on the line), if any."""
    for index, form in enumerate(canonical_forms(head)):
        found = _quoted_key(head, form, index) if kind != "weak" else None
        if found is None:
            found = _named_before(form, kind, strict, after, value, separator)
        if found is None:
            continue
        match, label = found
        first = original_offset(head, match.start("name"), index)
        last = original_offset(head, match.end("name") - 1, index) + 1
        return head[first:last], label, first + 1
    return None


def _quoted_key(head: str, form: str, index: int) -> tuple[re.Match[str], str] | None:
    """A quoted name before the separator: a key (`{"region": "EU"}`), whatever the name."""
    quoted = _QUOTED_KEY.search(form) if form.rstrip(" \t")[-1:] in _QUOTES else None
    if quoted is None or head[original_offset(head, quoted.start(), index)] == "`":
        return None  # a code span (`Region`: …) is Markdown prose naming the field, not a key
    name = quoted.group("name")
    if "\\" in name:  # a key written with JSON escapes (`"\u0061cl"`) reads as decoded
        start, end = quoted.span("name")
        written = head[original_offset(head, start, index) : original_offset(head, end - 1, index) + 1]
        name = written.encode("ascii", "backslashreplace").decode("unicode_escape", "replace")
    label = permission_label(name)
    return None if label is None else (quoted, label)


def _named_before(
    form: str, kind: str, strict: bool, after: str, value: bool, separator: str
) -> tuple[re.Match[str], str] | None:
    """The name (one word, or two: `Valid until`, `Expires on`) `form` ends with, and its field."""
    match = _INLINE_NAME.search(form)
    while match is not None:
        label = _inline_label(match.group("name"), kind, strict, after, value, separator)
        if label is not None:
            before = form[: match.start()].split()
            if strict or not before or before[-1].strip("([{\"'") not in PROSE_BEFORE_NAME | PROSE_OPENERS:
                return match, label
            return None  # "Edit the ACL: …", "a Region but no Acl:"
        name = match.group("name")
        if " " not in name.replace("\t", " "):
            return None
        # Two words, the first one of the sentence's: the second alone.
        match = _INLINE_NAME.search(form, match.start("name") + len(name.split()[0]) + 1)
    return None


def _inline_label(name: str, kind: str, strict: bool, after: str, value: bool, separator: str) -> str | None:
    """The field `name` stands for inside running text before a separator of `kind`."""
    unambiguous = bare_label(name)
    if unambiguous is not None:
        # After a dash, prose goes on ("… tore his ACL - the season ended"); a value does not.
        opener = after.split()[:1]
        return None if kind == "weak" and opener and opener[0].casefold() in PROSE_OPENERS else unambiguous
    if kind == "weak" or not value:
        return None
    label = permission_label(name)
    if strict:
        return label
    if label is None:
        return None
    # `=`, or a look-alike of `:` (`Region： EU`): no sentence writes either after an English word,
    # so any label name counts there when a value, not prose, follows.
    if (kind == "=" or separator != ":") and typed_value(name, after, weak=False, prose_check=True):
        return label
    # A date field's English name with a date after its separator (`FYI Expires: 2020-01-01`).
    if label in DATE_FIELDS and DATE_VALUE.match(canonical_forms(after.lstrip(" \t*_`~"))[0]):
        return label
    return None


_SPLIT_HINT = re.compile(r"[^\t\n]{0,16}?(?:[:=\t]| -|[^\x00-\x7f])")


def permission_across(first: str, second: str) -> tuple[str, str, int] | None:
    """A label split over two lines of one text (`… Acl` / `: staff`, `… Effective` / `To:
    2020-01-01`): found in the lines joined, when its name starts on the first line. (name,
    field, 1-based column in `first`); None when there is none, or each line shows its own."""
    if not _SPLIT_HINT.match(second.lstrip()):
        return None  # no separator near the second line's start: nothing can join across
    joined = f"{first.rstrip()} {second.lstrip()[:_PREFIX_CHARS]}"
    for found in (permission_line(joined), permission_inline(joined)):
        if found is not None and found[2] <= len(first.rstrip()):
            alone = permission_line(first) or permission_inline(first)
            return None if alone is not None else found
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
