"""The permission-label grammar: the fail-closed side of every reader (docs/security.md).

A permission field that a reader does not read as one would publish the unit it was meant to
restrict. So every format names its *label positions* and asks whether a label stands there. This
module reads the positions at a line's start:

- `permission_line`: the start of a line, after indentation and any run of list bullets
  (`- * + 1. 1)`), quote and comment leaders (`> // ; # <!--`), heading marks, task boxes and
  emphasis; a Markdown table row's cells (`| Acl | staff |`);
- `permission_after_lead`: a line's label after a short leading token (`Note: Region: EU`);
- `permission_value_start`: the start of a field's value (`Condition: Region: EU`);
- `permission_comment`: a comment line that is a field line (`# Acl: staff`).

There a label is a name followed by a separator whose canonical form is `:` or `=` (`Acl：`,
`Acl∶`, `Region =`), or by a weak one (a dash, an arrow or a bar between blanks, a tab: `Region -
EU`, `Audience — staff`) and a value of the field's type; a date field's name and a date closing
the line (`Expires 2020-01-01`); an unambiguous name written as one token and a short value
(`Acl staff`).

Labels inside running text and across two lines are core/cnl/permission_inline.py's; what a name
and a value read as (`permission_label`: a name that is a label by its place, a field name, a JSON
key, a SOP token) is core/cnl/permission_names.py's; a line holding U+202E RIGHT-TO-LEFT OVERRIDE
or markup is read as stored and as shown (core/cnl/permission_readings.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache

from core.cnl.canonical import canonical_forms, original_offset
from core.cnl.permission_finding import AMBIGUOUS_REASONS, LEVEL, MARKED, NOTICE, LabelFinding, first_reading
from core.cnl.permission_names import (
    DATE_FIELDS,
    DATE_VALUE,
    DIGIT,
    MAX_DATE_NAME_WORDS,
    MAX_NAME_WORDS,
    MAX_VALUE_WORDS,
    PREFIX_CHARS,
    bare_label,
    blank_end,
    ends_with_date,
    english_name,
    english_phrase,
    fold,
    permission_label,
    person_role,
    typed_value,
)
from core.cnl.permission_notices import confidentiality_level, may_be_notice, restriction_notice
from core.cnl.permission_readings import closed_up, readings, shown_differently
from core.cnl.permission_tables import CELL_BARS, CELL_SPLIT, header_blocks, row_cells
from core.text.words import PERIOD_ENDS, PERIOD_STARTS, PROSE_BEFORE_NAME, PROSE_OPENERS

# Leaders before a label at a line start: indentation, any run of marks that are not letters or
# digits (bullets, quote and comment leaders `> // ; # <!--`, heading marks, emphasis, invisible
# characters), list numbers and task boxes, in any order.
_LEADER = re.compile(r"(?:\s+|[^\w\s]+|_+|\d{1,3}[.)]|\[[ xX]\])*")
# A name of up to four words (one to three blanks apart), then any emphasis closing it, then a
# separator run.
_NAME = r"(?P<name>[^\W_](?:[^\W_]|[ \t]{1,3}(?=[^\W_])|[_.\-/'](?=[^\W_])){0,48}?)"
# A quote, a bracket or an escape may close the name (`'region' => 'EU'`, a PHP array's key;
# `[region]: EU`, a Markdown link's definition; `region\\:EU`, a Java properties file's).
_NAMED = re.compile(_NAME + r"[ \t*_`~\"'\])\\]*(?P<sep>[:=]+)")
# A weak separator, in canonical form: a dash, an arrow or a bar between blanks, an ellipsis, or a
# tab (`Region - EU`, `Acl → staff`, `Region | EU`, `Region… EU`, `Region<TAB>EU`; U+2014 EM DASH
# canonicalises to U+1173, `|` to its look-alike `l`, so a lone `l` between blanks is a bar, and
# `…` to `...`), a pointer (`>>`, `~>`, `=>`, `>` before a letter: `Region>EU`, not `p > 0.05`),
# or any sign or mark outside ASCII (`»`, `→`, `⇨`, `▶`: arrows and quotation marks point from a name to
# its value as a colon does), or a CSV's comma or semicolon with no blank after it (`Region,EU`,
# `"Region";"EU"`: prose puts a blank after both). What follows one must read as the field's
# value (`typed_value`), since prose uses all of them too.
_WEAK_SEPARATOR = (
    r"(?:[ \t]*\t[ \t]*|[ \t]*(?:\.{2,}|\u22ef)[ \t]+"
    r"|[ \t]+(?:[\-\u1173\u2e3a\u2e3b]{1,3}>?|[-~=]{1,2}>{1,3}|>{2,3}|[l\u00a6\u2502])[ \t]+"
    r"|[ \t]*>[ \t]*(?=[^\W\d_])|[\"']?[,;][\"']?(?=[^\s,;])"
    r"|[ \t]*[^\x00-\x7f\w\s]{1,3}[ \t]*)"
)
_WEAK_NAMED = re.compile(_NAME + r"[*_`~\"']*(?P<sep>" + _WEAK_SEPARATOR + ")")
# With no separator, a name written as one token (`EffectiveFrom`, `valid_until`), not two words.
_BARE = re.compile(r"[^\W_]+(?:[_.\-][^\W_]+){0,3}")
# Most lines: no separator, and no bare unambiguous name first (decided at C speed, ASCII only).
# Date fields' names (`Expires 2020-01-01`) count too; a weak separator (` - `, a tab, `->`) is
# looked for by `_ASCII_WEAK`.
# A date label read from its words (`Withdrawn after 2020-01-01`) starts with any word: up to six
# words (`Do not show this page before …`), a preposition of time (`PERIOD_ENDS`, `PERIOD_STARTS`,
# `on`) and a date closing the text (a digit, or a month's name and a digit, then at most 20
# characters): "… based on the …" and "Data from 1990 to 2000 were …" are read no further.
_PERIOD = "|".join(sorted(PERIOD_ENDS | PERIOD_STARTS | {"on"}))
BARE_STARTS = (
    r"(?i:a\W?c|a\W?l|e\W?f|v\W?a|exp|emb|not\W|pub|sunset|go\W?live"
    rf"|(?:[a-z]++[ \t]++){{1,{MAX_DATE_NAME_WORDS - 1}}}(?:{_PERIOD})[ \t]+(?:\d|[a-z]{{3,9}}\.?[ \t]+\d)[\w ,./-]{{3,20}}[\s*_`~.)\]]*\Z)"
)
ASCII_BARE = re.compile(r"[^A-Za-z0-9]{0,16}(?:\d{1,3}[.)][^A-Za-z0-9]{0,8})?" + BARE_STARTS)
_ASCII_WEAK = re.compile(r"(?<=[^\W_])[*_`~]*(?:[ ]+(?:-{1,3}>?|[-~=]{1,2}>{1,3}|>{2,3}|\|)|[ ]*\.{2,})[ ]")
# `>` between letters (`Region>EU`), apart: searched only in a text holding one.
_ASCII_POINTER = re.compile(r"(?<=[^\W\d_])[*_`~]*[ ]*>[ ]*(?=[^\W\d_])")
# A CSV row's first two cells (`Region,EU`, `"Acl";"staff"`): a name of up to four words, then a
# comma or semicolon with no blank after it.
_CSV_PAIR = re.compile(
    r"[^A-Za-z0-9]{0,16}+[A-Za-z][\w.\-]{0,30}+(?:[ ][A-Za-z][\w.\-]{0,30}+){0,3}+[\"']?[,;][\"']?[^\s,;]"
)
# A value pointed back at by its name (`staff <- Acl`, `EU ← Region`): read as `Acl -> staff`.
# (The arrows are literals, not a class: a class holding a character past U+00FF costs the import a
# 64K-entry map.)
_POINTED_BACK = re.compile(
    r"(?P<value>[^\s<].{0,60}?)[ \t]*(?:<-{1,3}|<={1,2}|\u2190|\u21d0|\u27f5)"
    r"[ \t]*(?P<name>[^\W_][\w .\-]{0,48}?)[ \t*_`~.]*\Z"
)


# A name marked as one by its form, with no separator (`--region EU`, `@region EU`, `**Region**
# EU`, `Region (EU)`, `REGION EU`): a sigil before it (a command line's option, a mention), emphasis
# closing it, its value in brackets closing the line, or capitals. Each is read as the name, a weak
# separator and the value (`Region -> EU`), so the value must have the field's type. The hint is
# ASCII, at C speed.
_MARKED_HINT = re.compile(
    r"[^A-Za-z0-9]{0,16}+(?:(?<=[-@/#])[A-Za-z]|[A-Za-z][\w.\-]*(?:[*_`]+[ \t]|[ \t]*[(\[][^()\[\]]{1,40}[)\]][ \t.]*\Z)"
    r"|[A-Z]{3,}(?:[ \t]|[ \t.!*_`~]*\Z))"
)
_MARKED_NAME = r"(?P<name>[^\W_](?:[^\W_]|[.\-](?=[^\W_])){0,30})"
_MARKED = (
    re.compile(_MARKED_NAME + r"[*_`]+[ \t]+(?P<value>\S.*)"),
    # (The fullwidth brackets as literals, not in a class: a class holding a character past
    # U+00FF costs the import a 64K-entry map.)
    re.compile(_MARKED_NAME + r"[ \t]*(?:[(\[]|\uff08)(?P<value>[^()\[\]]{1,40})(?:[)\]]|\uff09)[ \t.]*\Z"),
)
_CAPITALS = re.compile(r"(?P<name>[^\W\d_a-z]{3,30})[ \t]+(?P<value>\S.*)")
_SIGILS = "-@/#"  # an option, a mention, a slash command, a hashtag (`#region EU`)
_NOTICE_CHARS = 80


def weak_separator(text: str, end: int) -> bool:
    """Whether `text[:end]` holds a weak separator (`in` tests first, at C speed)."""
    head = text[:end]
    if "\t" in head or "<-" in head:
        return True
    if (
        " -" in text or " =>" in text or " |" in text or ".." in text or ">>" in text or "~>" in text
    ) and _ASCII_WEAK.search(text, 0, end) is not None:
        return True
    return ">" in head and _ASCII_POINTER.search(text, 0, end) is not None


def no_label_start(text: str) -> bool:
    """True when no label can start `text`: ASCII with no separator of any kind and no name a
    bare or dated label starts with (most lines), decided at C speed."""
    return (
        text.isascii()
        and ":" not in text
        and "=" not in text
        and "|" not in text
        and not ASCII_BARE.match(text)
        and not weak_separator(text, PREFIX_CHARS)
        and not (("," in text or ";" in text) and _CSV_PAIR.match(text))
        and not (len(text) <= PREFIX_CHARS and _MARKED_HINT.match(text))  # a marked label is short
        and not (len(text) <= _NOTICE_CHARS and may_be_notice(text))
    )


def permission_line(line: str) -> LabelFinding | None:
    """The label standing at the start of `line` (or at a table row's cell), else None."""
    if shown_differently(line[:PREFIX_CHARS]):
        texts = readings(line[:PREFIX_CHARS])
        headers = header_blocks(texts)
        return first_reading(
            cells_label(text, header_cell_label) if index in headers else _line_label(text)
            for index, text in enumerate(texts)
            if not (headers and index == 1)  # the blocks joined: a header's cells read as a row's
        )
    return _line_label(line)


# An INI or TOML section header (`[region]`, `[access]`): the keys under it are the field's; a
# git-config one names its value too (`[region "EU"]`).
_SECTION = re.compile(r"[ \t]*\[{1,2}[ \t]*(?P<name>[^\W\d_][\w.\- ]{0,40}?)(?:[ \t]+\"[^\"]*\")?[ \t]*\]{1,2}[ \t]*\Z")


def _line_label(line: str) -> LabelFinding | None:
    if line.endswith("]") and (section := _SECTION.match(line)) is not None:
        name = section.group("name")
        if len(name.split()) <= MAX_NAME_WORDS and (label := permission_label(name)) is not None:
            return LabelFinding(name, label, section.start("name") + 1, "section header", "name of a section")
    if no_label_start(line):
        return None  # most lines: decided at C speed
    head = line[:PREFIX_CHARS]
    if head.lstrip().startswith(CELL_BARS):
        return table_row(head)
    found = label_at(head, leader_end(head))
    if found is None and ("|" in head or CELL_BARS[1] in head):
        return table_row(head)  # a row with no outer bars (`Region|EU`, GitHub's `Region | EU`)
    return found


AFTER_LEAD = "after a leading token"
_LEAD_WORD = re.compile(r"[^\W_][\w'.]*[^\w\s]*[ \t]+")
_MAX_LEAD_WORDS = 3
# Another sentence after the value (an ellipsis is a separator: `Region... EU`).
_SENTENCE_GOES_ON = re.compile(r"(?<!\.)[.!?][\"')\]]*[ \t]+[A-Z0-9]")


def permission_after_lead(line: str) -> LabelFinding | None:
    """A label after a short leading token on a line of its own (`Note: Region: EU`, `FYI
    Expires: 2020-01-01`, `Internal note — Acl - staff`): at most three words that are not an
    article or a preposition, then a closing label (`_closing_label`)."""
    return after_lead(line, leader_end(line), lead_only=True)


def after_lead(line: str, at: int, *, lead_only: bool, position: str = AFTER_LEAD) -> LabelFinding | None:
    """A closing label at `line[at]` (unless `lead_only`) or after up to three leading words."""
    if not lead_only and (found := _closing_label(line, at, position)) is not None:
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
        found = _closing_label(line, at, AFTER_LEAD)
        if found is not None:
            return found
    return None


def permission_value_start(text: str) -> LabelFinding | None:
    """A label opening a field's value or a document's text (`Condition: Region: EU`, a JSON
    `title` of `Region: EU`): after the field's name, as after a leading token, when its value
    closes the text."""
    if no_label_start(text[:PREFIX_CHARS]):
        return None
    return _closing_label(text, leader_end(text), "value start")


def _closing_label(line: str, at: int, position: str) -> LabelFinding | None:
    """A label at `line[at]` read as at a line start, whose value closes the line: short, and no
    sentence after it (`… 4411. Region - EU`, but not `Region: EU. The vault …`)."""
    rest = line[at:]
    if (
        no_label_start(rest)
        or rest.count(" ") >= 2 * (MAX_NAME_WORDS + MAX_VALUE_WORDS)
        or len(rest.split()) > MAX_NAME_WORDS + MAX_VALUE_WORDS
        or _SENTENCE_GOES_ON.search(rest)
    ):
        return None
    return label_at(line[:PREFIX_CHARS] if at < PREFIX_CHARS else line, at, position)


def leader_end(text: str) -> int:
    text = text[:PREFIX_CHARS]
    if not text.isascii():
        # A sign NFKC reads as a letter (`Ⓐ`, category So) starts the name, not the leader.
        text = text.translate(_LETTER_SIGNS)
    leader = _LEADER.match(text)
    assert leader is not None  # `*` matches the empty string
    return leader.end()


def label_at(text: str, at: int, position: str = "line start", *, prose: bool = False) -> LabelFinding | None:
    """The label starting at `text[at]`, a label position of kind `position` (column in `text`).
    `prose`: the position is a sentence's start inside running prose, where an English name's
    value decides after a colon too, and a date field's English name needs a date
    (`VALIDATION: Comparison has been made …` in an abstract is a sentence)."""
    rest = text[at:]
    found = (_kept_label if len(rest) <= PREFIX_CHARS else _label_of)(rest, position, prose)
    if found is None and not prose and 0 < at and text[at - 1] in _SIGILS and (blank := rest.find(" ")) > 0:
        found = _label_in(f"{rest[:blank]} -> {rest[blank:].strip()}", position, prose)  # `--region EU`
        found = None if found is None else replace(found, shown=True, reason=MARKED)
    return found if found is None or at == 0 else found.moved(at)


def _label_of(rest: str, position: str, prose: bool) -> LabelFinding | None:
    found = _label_in(rest, position, prose)
    if found is None and (spaced := closed_up(rest[:PREFIX_CHARS])) is not None:
        found = _label_in(spaced, position, prose)  # `R e g i o n : EU` read as a reader reads it
        return None if found is None else replace(found, shown=True)
    if found is None and len(rest) <= PREFIX_CHARS and ("<" in rest or not rest.isascii()):
        back = _POINTED_BACK.match(rest)  # `staff <- Acl` read as `Acl -> staff`
        found = None if back is None else _label_in(f"{back['name']} -> {back['value']}", position, prose)
        if found is not None:
            return replace(found, shown=True)
    if found is None and not prose and len(rest) <= PREFIX_CHARS:
        found = _marked_label(rest, position)
    return found


def _marked_label(rest: str, position: str) -> LabelFinding | None:
    """The label of a name marked by its form (`_MARKED`, `_CAPITALS`: a field's own English name
    only, `ACCESS DENIED` is a heading), read as the name, a weak separator and its value."""
    for pattern in _MARKED:
        marked = pattern.match(rest)
        if marked is not None:
            break
    else:
        marked = _CAPITALS.match(rest)
        if marked is None or english_name(marked["name"]) or bare_label(marked["name"]) is not None:
            return None  # an unambiguous name's value is read as with no mark (`ACL tag … in region US.`)
    found = _label_in(f"{marked['name']} -> {marked['value'].strip()}", position, False)
    return None if found is None else replace(found, shown=True, reason=MARKED)


# What follows a line's leader recurs (`Acl: staff` on every unit, after any bullet or quote
# mark), so it is read once; only short texts are kept, never a whole long line.
_kept_label = lru_cache(maxsize=8192)(_label_of)


def _label_in(rest: str, position: str, prose: bool) -> LabelFinding | None:
    for index, form in enumerate(canonical_forms(rest)):
        found = _form_label(form, rest, index, prose, notice=position != AFTER_LEAD)
        if found is not None:
            start, end, label, reason = found
            first = original_offset(rest, start, index)
            last = max(original_offset(rest, end - 1, index) + 1, first + 1)
            return LabelFinding(rest[first:last].strip(), label, first + 1, position, reason)
    return None


def _form_label(form: str, rest: str, index: int, prose: bool, *, notice: bool) -> tuple[int, int, str, str] | None:
    """(start, end, field, reason) of the label a canonical text starts with: a name and a separator,
    a name, a weak separator and a value of the field's type, a date field's name and a date, or
    an unambiguous name and a short value; or (with `notice`, not after a leading token: `Euro
    inflation only` is a topic's) a restriction notice. `form` is canonical form number `index`
    of `rest`."""
    for pattern, reason in ((_NAMED, "separator"), (_WEAK_NAMED, "weak separator and a typed value")):
        named = pattern.match(form)
        if named is not None and len(named.group("name").split()) <= MAX_DATE_NAME_WORDS:
            name = named.group("name")
            label = permission_label(name)
            if label is None and (written := camel_case(rest, named, index)) is not None:
                name, label = written, permission_label(written)
            value = form[named.end() :]
            if label is None and not prose and confidentiality_level(value):
                return named.start("name"), named.end("name"), "Acl", LEVEL
            if (
                label is not None
                and (
                    typed_value(name, value, pattern is _WEAK_NAMED, prose_check=prose)
                    or (not prose and restriction_notice(value.strip(" \t*_`~")) is not None)  # `Audience - staff only`
                )
                and (not prose or label not in DATE_FIELDS or bare_label(name) or _opens_with_date(value))
                and not (english_phrase(name) and person_role(name, rest[original_offset(rest, named.end(), index) :]))
            ):
                return named.start("name"), named.end("name"), label, reason
    dated = _dated_label(form)
    if dated is not None:
        return dated
    if notice and not prose and len(form) <= _NOTICE_CHARS:
        if (span := restriction_notice(form)) is not None:
            return *span, "Acl", NOTICE
        if rest.isupper() and confidentiality_level(form):
            return 0, len(form.rstrip(" \t.!*_`~")), "Acl", LEVEL  # a marking alone: `CONFIDENTIAL`
    bare = _BARE.match(form)
    if bare is None:
        return None
    label = bare_label(bare.group())
    rest = form[bare.end() :].strip(" \t*_`~")
    if label is None or not rest or len(rest.split()) > MAX_VALUE_WORDS or rest[-1] in ".!?":
        return None
    return bare.start(), bare.end(), label, "unambiguous name and a value"


def _opens_with_date(value: str) -> bool:
    return DATE_VALUE.match(value.lstrip(" \t*_`~")) is not None


CASE_CHANGE = re.compile(r"[a-z][A-Z]")


def camel_case(rest: str, named: re.Match[str], index: int) -> str | None:
    """The name `named` (group `name`) found in canonical form number `index` of `rest`, as
    written, when case changes inside it (`userAcl`, `accessLevel`): folding the case hides a
    compound's parts."""
    if not CASE_CHANGE.search(rest, 0, PREFIX_CHARS):
        return None
    first = original_offset(rest, named.start("name"), index)
    written = rest[first : original_offset(rest, named.end("name") - 1, index) + 1]
    return written if CASE_CHANGE.search(written) else None


def _dated_label(form: str) -> tuple[int, int, str, str] | None:
    """A date field's name (up to `MAX_DATE_NAME_WORDS` words) and then a date ending the line,
    with no separator (`Expires 2020-01-01`, `Valid until 31/12/2020`)."""
    if not DIGIT.search(form, 0, PREFIX_CHARS):
        return None
    words = list(re.finditer(r"[^\W_]+(?:[_.\-][^\W_]+)*", form[:PREFIX_CHARS]))
    for count, last in enumerate(words[:MAX_DATE_NAME_WORDS], start=1):
        name = form[words[0].start() : last.end()]
        if words[0].start() != 0 or not re.fullmatch(r"[^\W_]+(?:[ \t_.\-]+[^\W_]+)*", name):
            return None
        # The date first: a name is read only where one follows (most texts have none).
        if ends_with_date(form, blank_end(form, last.end())) and (label := permission_label(name)) in DATE_FIELDS:
            return 0, last.end(), label, "name and a date"
        if count == MAX_DATE_NAME_WORDS:
            break
    return None


def table_row(row: str) -> LabelFinding | None:
    """A table row one of whose cells starts with a label: a name alone (`| Acl | staff |`) or a
    name with its separator (`| Acl: staff |`)."""
    offset = 0
    for cell in CELL_SPLIT.split(row):
        written = cell.strip(" \t*_`~").rstrip(":=").strip()
        name = closed_up(written) or written
        if name and len(name.split()) <= MAX_NAME_WORDS and (label := permission_label(name)) is not None:
            return LabelFinding(written, label, offset + cell.index(written) + 1, "table cell", "name alone in a cell")
        found = label_at(cell, leader_end(cell), "table cell")
        if found is not None:
            return found.moved(offset)
        offset += len(cell) + 1
    return None


_CELL_WORD = re.compile(r"[^\s*_`~:=]+")


def header_cell_label(cell: str) -> LabelFinding | None:
    """The label in a cell of a table's header (`header_row`): a label with its value (`| Acl:
    staff | … |`), or an unambiguous name (`Acl<TAB>Rule`, `Vault ACL<TAB>…`: no public table
    names a column so); an English name is the column's (`Region<TAB>Population`)."""
    for word in _CELL_WORD.finditer(cell):
        if (label := bare_label(word.group())) is not None:
            return LabelFinding(word.group(), label, word.start() + 1, "table header", "unambiguous name")
    return label_at(cell, leader_end(cell), "table header")


def cells_label(row: str, read: Callable[[str], LabelFinding | None]) -> LabelFinding | None:
    """The first label `read` finds in a row's cells, its column in the row."""
    offset = 0
    for cell in row_cells(row):
        if (found := read(cell)) is not None:
            return found.moved(offset)
        offset += len(cell) + 1
    return None


class _LetterSigns(dict):
    """A `str.translate` table, filled on first sight of each character: `a` for a non-ASCII
    character that reads as a letter, the character itself otherwise."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        self[code] = mapped = (
            "a" if not char.isascii() and any(c.isalnum() for c in canonical_forms(char)[-1]) else char
        )
        return mapped


_LETTER_SIGNS = _LetterSigns()


# From/To`. "# Region-only unit: …" or "# (effectiveFrom <= as-of date)" talk about permissions.
_COMMENT_NAME = re.compile(r"[^\W\d_][\w-]*(?:[ \t]+(?:from|to))?", re.IGNORECASE)


def permission_comment(line: str) -> LabelFinding | None:
    """`permission_line` for a comment line (`# Acl: staff`, `# - region = EU`), where prose about
    permissions is expected: only a line that is a field line counts, a sentence about one does not."""
    found = permission_line(line)
    return found if found is not None and _COMMENT_NAME.fullmatch(canonical_forms(found.name)[0]) else None


def unread_message(name: str, label: str, where: str, *, pair_row: bool = False, reason: str = "") -> str:
    """The error for a permission-like line or key that is not read as the field. `pair_row`: the
    line is a two-cell table row headed by the name (`pair_row` in core/cnl/permission_tables.py),
    which may name two columns: the hint says how to keep such a table public; so does one for a
    label found only by its form or its value (`reason`: `Staff only`, `Sensitivity: Private`,
    `REGION EU`), which a public text may hold."""
    hint = f"did you mean {label!r}? " if fold(name) != fold(label) else f"write it as the unit's {label} field; "
    if pair_row:
        hint = (
            "a two-column table headed by a field's name reads as that field and its value: if it restricts "
            f"the unit, {hint.rstrip('; ')}; if the row names columns, add a third column or name the first "
            "one otherwise; "
        )
    if reason in AMBIGUOUS_REASONS:
        hint = f"if it restricts the unit, {hint.rstrip('; ')}; if the text is public, {AMBIGUOUS_REASONS[reason]}; "
    return (
        f"{name!r} looks like a permission field but is not read as one {where}; {hint}"
        "the unit is withdrawn until this is fixed (fail closed)"
    )
