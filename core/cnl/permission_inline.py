"""Labels inside running text (docs/security.md, "The permission-label grammar"):

- `permission_inline`: running prose (a Markdown value, a SOP string, a JSON `title`/`text`, a
  sentence), where an unambiguous name before a separator counts (`Note — acl: staff`, `… Acl ->
  staff`, `… Acl:` with its value on the next line), any name before `=` or a look-alike of `:`,
  a quoted key (`{"region": "EU"}`), a date field's name before `:` and a date; after an HTML
  comment's `<!--`, at a table row's cells, and at the start of the text's last sentence (or after
  up to three leading words there) when the label's value closes the text (`… 4471. Region - EU`);
  not after an article, pronoun or preposition ("Edit the ACL: …"); in a URL's query only a
  parameter of an unambiguous name (`?acl=staff`; `?region=eu`, `?tags=…` are a site's own);
- `permission_heading`: a unit heading's text (`## Context Unit x (Acl: staff)`, a SOP id);
- `permission_across`: a label split over two lines.

A label position inside running text is read as a line's start (core/cnl/permissions.py).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from core.cnl.canonical import canonical_forms, original_offset
from core.cnl.permission_finding import HEADING_OVER_VALUE, LabelFinding, first_reading
from core.cnl.permission_names import (
    DATE_FIELDS,
    DATE_VALUE,
    MAX_NAME_WORDS,
    MAX_VALUE_WORDS,
    bare_label,
    english_name,
    permission_label,
    typed_value,
)
from core.cnl.permission_readings import BLOCK_LINES, closed_up, readings, shown_differently
from core.cnl.permission_tables import SENTENCE_END, header_blocks
from core.cnl.permissions import (
    ASCII_BARE,
    BARE_STARTS,
    CASE_CHANGE,
    PREFIX_CHARS,
    after_lead,
    camel_case,
    cells_label,
    header_cell_label,
    label_at,
    leader_end,
    no_label_start,
    permission_line,
    table_row,
    weak_separator,
)
from core.text.words import PROSE_BEFORE_NAME, PROSE_OPENERS

# A last sentence that may be a bare or dated label (`… 4411. Acl staff`, `… Expires 2020-01-01`).
_ASCII_CLOSING_HINT = re.compile(
    r"[.!?][\"')\]]* +[^A-Za-z0-9 ]{0,4}" + BARE_STARTS + r"[^.!?;]*(?:[.!?][\"')\]]*)?\s*\Z"
)
# A last sentence that may be a restriction notice (`… 4471. Staff only.`,
# core/cnl/permission_notices.py).
_CLOSING_NOTICE = re.compile(r"[.!?][\"')\]]* +[^.!?]{0,60}\b(?i:only)[ \t.!*_`~)\]]*\Z")
# A last sentence that is a CSV's pair: a name, a comma or semicolon with no blank after it, a value;
# short, so looked for in a text's last `_CSV_CHARS` only.
_CSV_CHARS = 100
_CLOSING_CSV = re.compile(r"[.!?][\"')\]]* +[\"']?[A-Za-z][\w.\-]{0,30}[\"']?[,;][\"']?[^\s,;][^.!?]{0,60}\Z")


# Inside running prose: a separator with a value after it, and the word (or `Effective From`-like
# pair) directly before it, not inside a URL query (`?region=eu`). Found from the separators of the
# raw text back, canonicalising only the few characters before each, so a long text costs one
# scan, not a canonical copy of all of it.
_SEPARATOR_CANDIDATE = re.compile(
    r"[:=]|\t|[ \t](?=[-~=>|])(?:-{1,3}>?|[-~=]{1,2}>{1,3}|>{2,3}|\|)(?=[ \t])|\.\.+(?=[ \t])|[^\x00-\x7f]"
)
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
# Bound once: CPython 3.11 compiles `ASCII_BARE.match(…)` on an imported name as an attribute
# load, which builds a bound method on each call (`labelless` runs once per field value).
_bare_start = ASCII_BARE.match


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
        and not ("&" in text or "<" in text or ">>" in text or "*" in text or "~" in text)
        and _bare_start(text) is None
        # an ellipsis (a weak separator), or a sentence a label may start
        and not (("." in text or "!" in text or "?" in text) and (".." in text or _closing_hint(text)))
    )


def _closing_hint(text: str) -> bool:
    """Whether a last sentence may be a bare or dated label, or a CSV's pair (`… 4471.
    Region,EU`): looked for among the sentence ends the closing-sentence reader reads (`_inline`:
    the text's last `PREFIX_CHARS`), not in all."""
    at = max(0, len(text) - PREFIX_CHARS)
    return (
        _ASCII_CLOSING_HINT.search(text, at) is not None
        or (
            ("," in text[-_CSV_CHARS:] or ";" in text[-_CSV_CHARS:])
            and _CLOSING_CSV.search(text, max(0, len(text) - _CSV_CHARS)) is not None
        )
        or (("nly" in text[-16:] or "NLY" in text[-16:]) and _CLOSING_NOTICE.search(text, at) is not None)
    )


def may_hold_label(text: str) -> bool:
    """False for text no label can be in: ASCII with no separator of any kind (most prose)."""
    return not text.isascii() or ":" in text or "=" in text or weak_separator(text, len(text))


def permission_inline(line: str) -> LabelFinding | None:
    """The first permission label written inside running prose `line`, else None."""
    if shown_differently(line):
        texts = readings(line)
        headers = header_blocks(texts)
        return first_reading(
            _header_label(text)
            if index in headers
            else (permission_line(text) if index >= BLOCK_LINES else None) or _inline_label_of(text)
            for index, text in enumerate(texts)
            if not (headers and index == 1)  # the blocks joined: a header's cells read as a row's
        )
    return _inline_label_of(line)


def _inline_label_of(line: str) -> LabelFinding | None:
    if not may_hold_label(line) and not _closing_hint(line):
        return None
    return _inline(line, strict=False)


# The id schema's own parts (`<source>::chunk-NNN::unit-NNN`, docs/formats.md; `ID_SCHEMA` in
# core/cnl/validate.py): there `::` joins an id's parts and separates no label, so
# `regions::chunk-000::unit-000` names a source called "regions", not a Region.
_ID_PARTS = re.compile(r"(?<=[^\s:])::chunk-\d{3,}(?:::unit-\d{3,})?(?=\s|$)")


def without_id_parts(text: str) -> str:
    """`text` with the id schema's parts blanked, columns kept: the source and any text around
    the id are read as before (`x::chunk-000::unit-000 (Region: EU)` still holds a label)."""
    return _ID_PARTS.sub(lambda part: " " * len(part.group()), text) if "::" in text else text


def permission_heading(text: str) -> LabelFinding | None:
    """`permission_inline` for a unit heading's text or an id: not prose, so every label with a
    separator counts there (`## Context Unit x (Region: EU)`), and each word after the id starts a
    label position (`x (Region - EU)`, `x Acl staff`, `x Expires 2020-01-01`)."""
    text = without_id_parts(text)
    found = _inline(text, strict=True) if may_hold_label(text) else None
    if found is None and (words := _AFTER_FIRST_WORD.finditer(text, 0, PREFIX_CHARS)):
        head = text[:PREFIX_CHARS]
        found = next(
            filter(
                None,
                (label_at(head, word.start() + leader_end(head[word.start() :]), "heading word") for word in words),
            ),
            None,
        )
    return found


def _inline(line: str, *, strict: bool) -> LabelFinding | None:
    """The first label inside `line`: after an HTML comment's opener (a label position), or a
    name before a separator. A weak separator (a dash or an arrow between blanks, a tab) and a
    colon ending the line (the value on the next line) count after an unambiguous name only."""
    if _CELL_HINT.search(line, 0, PREFIX_CHARS) and (found := table_row(line[:PREFIX_CHARS])) is not None:
        return found  # `… | Region | EU`: each cell of a row written in a text is a label position
    if ("?" in line or "&" in line) and (found := _query_label(line)) is not None:
        return found
    if "<!--" in line:
        for opener in _COMMENT_OPEN.finditer(line):
            found = label_at(line, opener.end(), "HTML comment")
            if found is not None:
                return found
    if not strict:
        # A sentence's start is a line's start when what follows closes the text: a label
        # written as the last "sentence" (`The code is 4411. Region - EU`, `… Note: Region: EU`).
        # Only the last sentences can close the text (`Acl. staff` ends two "sentences").
        for end in list(SENTENCE_END.finditer(line, max(0, len(line) - PREFIX_CHARS)))[-2:]:
            if line.count(" ", end.end()) > 2 * (MAX_NAME_WORDS + MAX_VALUE_WORDS):
                continue
            found = after_lead(line, end.end(), lead_only=False, position="closing sentence")
            if found is not None:
                return found
        # Every sentence's start is a line's start for a label its sentence holds whole (`See
        # below. Region: EU. The vault …`, `… 4471. Region — EU. It opens …`): looked for from
        # each separator back (`_sentence_before`).
    seen: set[int] = set()  # sentence starts read already
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
        head = line[start:at]
        found = _name_before(head, kind, strict, line[separator.end() : separator.end() + 40], value, char)
        if found is not None:
            return found.moved(start)
        if not strict and (found := _sentence_before(line, at, separator.end(), seen)) is not None:
            return found
    return None


# A URL query's parameter (`?acl=staff`, `&region=EU`).
_QUERY = re.compile(r"[?&](?P<name>[^\W\d_][\w.\-]{0,30})=(?=[^&#\s])")


def _query_label(line: str) -> LabelFinding | None:
    """A URL query's parameter of an unambiguous name (`?acl=staff`, `&effectiveFrom=…`): no site
    names its own parameters so. An English word (`?region=eu` on a map, `?tags=`) is the site's."""
    for query in _QUERY.finditer(line):
        name = query["name"]
        if (label := bare_label(name)) is not None:
            return LabelFinding(name, label, query.start("name") + 1, "URL query", "separator")
    return None


# The last sentence's end in a text (no `.` `!` `?` after it).
_LASTSENTENCE_END = re.compile(r"[.!?][\"')\]]*(?:\s+|(?=[A-Z]))(?=[^.!?]*\Z)")


def _sentence_before(line: str, at: int, after: int, seen: set[int]) -> LabelFinding | None:
    """A label opening the sentence of `line` that a separator at `line[at]` (ending at `after`)
    stands in, at most four words after the sentence's start, read in that sentence alone. An
    ASCII name that reads as no label (`RESULTS:`) is not read further."""
    end = _LASTSENTENCE_END.search(line, max(0, at - _NAME_REACH - 8), at)
    if end is None or (start := end.end()) in seen:
        return None
    seen.add(start)
    lead = start + leader_end(line[start:at])
    name = line[lead:at].rstrip(" \t*_`~")
    name = closed_up(name) or name  # `R e g i o n : EU` reads `Region`
    if len(name.split()) > MAX_NAME_WORDS or (
        name.isascii() and permission_label(name) is None and bare_label(name) is None
    ):
        return None
    return _sentence_label(line, start, after)


def _sentence_label(line: str, start: int, after: int) -> LabelFinding | None:
    """The label the sentence of `line` from `start` opens, its end looked for from `after`."""
    end = SENTENCE_END.search(line, after)
    sentence = line[start : end.start() + 1 if end is not None else len(line)][:PREFIX_CHARS]
    if no_label_start(sentence):
        return None
    found = label_at(sentence, leader_end(sentence), "sentence start", prose=True)
    return None if found is None else found.moved(start)


@lru_cache(maxsize=4096)
def _separator_kind(char: str) -> str | None:
    """`:` or `=` for what reads as one, "weak" for a dash, an arrow or a tab, else None."""
    if char in (":", "="):
        return char
    if char == "\t" or char.strip(" \t").startswith(("-", "=", ">", "~", "|", "..")):
        return "weak"
    read = _read_as(char)
    if read in (":", "="):
        return read
    if read.startswith(".."):
        return "weak"  # an ellipsis (`Region… EU`)
    if unicodedata.category(char) == "Pd" or _POINTER.search(unicodedata.name(char, "")):
        return "weak"  # a dash, an arrow (`→`, `⇨`), a pointer (`≫`, `▶`, `»`); not `≥` or `±`
    return None


# Signs that point from a name to its value, by their Unicode names.
_POINTER = re.compile(r"ARROW|POINTING|ANGLE QUOTATION|MUCH GREATER|TRIANGLE")


@lru_cache(maxsize=4096)
def _read_as(char: str) -> str:
    """What one non-ASCII character reads as (`:` for `：`). Cached: a text in another script has
    one candidate per character (a 1 MB file of one mark had cost 3 CPU s)."""
    return canonical_forms(char)[0]


def _name_before(
    head: str, kind: str, strict: bool, after: str, value: bool, separator: str = ":"
) -> LabelFinding | None:
    """The permission name `head` ends with (before a separator of `kind`, `after` following it,
    `value` whether a value follows on the line), if any."""
    camel = CASE_CHANGE.search(head) is not None
    for index, form in enumerate(canonical_forms(head)):
        found = _quoted_key(head, form, index) if kind != "weak" else None
        if found is None:
            found = _named_before(head if camel else None, form, index, kind, strict, after, value, separator)
        if found is None:
            continue
        match, label, reason = found
        first = original_offset(head, match.start("name"), index)
        last = original_offset(head, match.end("name") - 1, index) + 1
        return LabelFinding(head[first:last], label, first + 1, "running text", reason)
    return None


def _quoted_key(head: str, form: str, index: int) -> tuple[re.Match[str], str, str] | None:
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
    return None if label is None else (quoted, label, "quoted key")


def _named_before(
    camel: str | None, form: str, index: int, kind: str, strict: bool, after: str, value: bool, separator: str
) -> tuple[re.Match[str], str, str] | None:
    """The name (one word, or two: `Valid until`, `Expires on`) `form`, canonical form number
    `index` of the text before the separator, ends with, and its field; `camel` is that text when
    its case changes inside a word (`userAcl`), so a name is read as written too."""
    match = _INLINE_NAME.search(form)
    while match is not None:
        name = (camel_case(camel, match, index) if camel is not None else None) or match.group("name")
        found = _inline_label(name, kind, strict, after, value, separator)
        if found is not None:
            before = form[: match.start()].split()
            if strict or not before or before[-1].strip("([{\"'") not in PROSE_BEFORE_NAME | PROSE_OPENERS:
                return match, *found
            return None  # "Edit the ACL: …", "a Region but no Acl:"
        name = match.group("name")
        if " " not in name.replace("\t", " "):
            return None
        # Two words, the first one of the sentence's: the second alone.
        match = _INLINE_NAME.search(form, match.start("name") + len(name.split()[0]) + 1)
    return None


def _inline_label(
    name: str, kind: str, strict: bool, after: str, value: bool, separator: str
) -> tuple[str, str] | None:
    """The field `name` stands for inside running text before a separator of `kind`, and why."""
    unambiguous = bare_label(name)
    if unambiguous is not None:
        # After a dash, prose goes on ("… tore his ACL - the season ended"); a value does not.
        opener = after.split()[:1]
        if kind == "weak" and opener and opener[0].casefold() in PROSE_OPENERS:
            return None
        return unambiguous, "unambiguous name and a separator"
    if kind == "weak" or not value:
        return None
    label = permission_label(name)
    if label is None:
        return None
    if strict:
        return label, "separator"
    # `=`, or a look-alike of `:` (`Region： EU`): no sentence writes either after an English word,
    # so any label name counts there when a value, not prose, follows.
    if (kind == "=" or separator != ":") and typed_value(name, after, weak=False, prose_check=True):
        return label, "`=` or a look-alike of `:` and a value"
    # A date field's English name with a date after its separator (`FYI Expires: 2020-01-01`).
    if label in DATE_FIELDS and DATE_VALUE.match(canonical_forms(after.lstrip(" \t*_`~"))[0]):
        return label, "name and a date"
    return None


def header_label(line: str) -> LabelFinding | None:
    """The label in a table's header row (`header_row`): a cell that is a label with its value
    (`| Acl: staff | … |`), or that holds an unambiguous name (`Acl<TAB>Rule`, `Vault ACL<TAB>…`:
    no public table names a column so); an English name is the column's (`Region<TAB>Population`)."""
    if shown_differently(line):
        return first_reading(map(_header_label, readings(line)))
    return _header_label(line)


def _header_label(row: str) -> LabelFinding | None:
    return cells_label(row, lambda cell: header_cell_label(cell) or _inline_label_of(cell))


# A separator near the second line's start, or a definition list's `<dd>` under its `<dt>`.
_SPLIT_HINT = re.compile(r"[^\t\n]{0,16}?(?:[:=\t]| -|[^\x00-\x7f])|<(?i:dd)\b")


def permission_across(first: str, second: str) -> LabelFinding | None:
    """A label split over two lines of one text (`… Acl` / `: staff`, `… Effective` / `To:
    2020-01-01`): found in the lines joined, when its name starts on the first line (its column
    is in `first`); None when there is none, or each line shows its own."""
    if first.lstrip().startswith("#") and (found := heading_over_value(first, second)) is not None:
        return found
    if not _SPLIT_HINT.match(second.lstrip()):
        return None  # no separator near the second line's start: nothing can join across
    # A word hyphenated over the break reads as one (`Ac-` / `cess: hr`, `Re-` / `gion: EU`).
    stripped = first.rstrip()
    hyphenated = stripped.endswith("-") and stripped[-2:-1].isalpha()
    joined = f"{stripped[:-1] if hyphenated else stripped + ' '}{second.lstrip()[:PREFIX_CHARS]}"
    for found in (permission_line(joined), permission_inline(joined)):
        if found is not None and found.column <= len(first.rstrip()):
            alone = permission_line(first) or permission_inline(first)
            return None if alone is not None else found.at("two lines")
    return None


def heading_over_value(heading: str, line: str) -> LabelFinding | None:
    """A heading that is a field's own name or an unambiguous one (`### Region`), over a line
    that is the field's value alone (`EU`: short, of the field's type, no sentence): a section
    holding a field, as a Markdown renderer shows it. An English synonym (`### Access`) heads
    prose as often."""
    at = leader_end(heading)
    name = heading[at:].strip(" \t*_`~#")
    value = line.strip(" \t*_`~")
    if (
        not name
        or (label := permission_label(name)) is None
        or english_name(name)
        or not value
        or value[-1] in ".!?:"
        or not typed_value(name, value, True)
    ):
        return None
    return LabelFinding(name, label, heading.index(name) + 1, "two lines", HEADING_OVER_VALUE)


# A comment that is a field line names one field: a word (`Acl`, `effective-to`), or `Effective
