"""Markdown units: `## Context Unit <id>` followed by `Field: value` lines (DS005).

Inside a unit, indented lines and Markdown list items (`- step`, `1. step`) continue the previous
field and every other non-blank line must be a field. Any other heading or a horizontal rule
(`---`) ends the unit; text outside units (titles, prose) is ignored, except a line that reads
like a permission field (`Acl: x`, `- Region: EU`, `### ACL: x`) or writes one inside it (`Note —
acl: staff`, `(Region=EU)`; core/cnl/permissions.py): such a line, as a continuation, is an error
that withdraws its unit; after a unit's end, one that withdraws that unit and the next (it could
have been meant for either); before the first unit (front matter), one that withdraws every unit
of the file (fail closed: the author meant to restrict something). A permission field written
inside a field's value (`Claim: … Acl: staff`) withdraws its unit too (core/cnl/validate.py).
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Sequence

from core.cnl.markdown_plain import read_plain
from core.cnl.permission_inline import (
    header_label,
    heading_over_value,
    permission_heading,
    permission_inline,
)
from core.cnl.permission_tables import TABLE_ROWS, header_row, pair_row
from core.cnl.permissions import permission_line, unread_message
from core.cnl.source_text import Token, source_lines, token
from core.cnl.validate import FIELD_LABELS, UnitDraft, field_key
from core.infra.diagnostics import Code, Diagnostic, for_author
from core.units import KnowledgeUnit

# The id is the rest of the line, right-stripped in code: a lazy `(?P<id>.*?)\s*$` retries the
# `\s*$` at every character and is quadratic in a whitespace run inside the id.
_UNIT_HEADING = re.compile(r"##\s+Context\s+Unit\b[ \t]*(?P<id>.*)", re.IGNORECASE)
_FIELD = re.compile(r"(?P<name>[A-Za-z][\w-]*)[ \t]*:[ \t]*(?P<value>.*)")
# A line `_UNIT_HEADING` opens a unit with, found over a whole text (behind a line feed, so the
# search runs on the literal `\n##`): blanks that are not line feeds, so a match never runs into
# the next line as `\s` could.
_UNIT_HEADING_LINE = re.compile(r"\n##[^\S\n]+(?i:context)[^\S\n]+(?i:unit)\b")
_LIST_ITEM = re.compile(r"(?:[-*+]|\d+[.)])\s")
_RULE = re.compile(r"(?:-{3,}|\*{3,}|_{3,})\s*$")
_LETTERS = frozenset(string.ascii_letters)
# A heading that misspells `## Context Unit <id>` (`## ContextUnit x`, `# Context Unit x`,
# `### context-unit x`): at most one word after it, so a title "# Context units of …" is prose.
_NEAR_HEADING = re.compile(r"#+[ \t]*context[ \t_-]*units?\b[ \t]*\S*[ \t]*$", re.IGNORECASE)


def _field_hint(line: str, after_field: bool) -> str:
    """What a line that is not `Field: value` most likely meant: a field with its colon missing
    (`Topic Drainage`), else, right below a field, more of that field's text left unindented."""
    name, _, rest = line.strip().partition(" ")
    if field_key(name) is not None and rest.strip():
        return f"; did you mean '{name}: {rest.strip()}'?"
    return "; indent it to continue the field above" if after_field else ""


class _Reader:
    def __init__(self, file: str):
        self.file = file
        self.units: list[KnowledgeUnit] = []
        self.diagnostics: list[Diagnostic] = []
        self.draft: UnitDraft | None = None
        # Lines of the open field, kept until the next field so continuations can join them.
        self.field: tuple[Token, list[Token]] | None = None
        self.in_unit = False
        self.seen_heading = False
        # A permission-like line before the first unit: meant for the whole file.
        self.whole_file = False
        # One after a unit's end, which could be meant for the next unit too.
        self.dangling: Token | None = None
        # The diagnostic of a misspelt unit heading since the last unit heading, if any.
        self.near_heading: int | None = None
        # The diagnostic of a unit heading without an id, while its lines are skipped.
        self.headless: int | None = None
        # The line after the one read: it makes a table row a header (`header_row`).
        self.below: str | None = None
        self.rows: Sequence[str] = ()  # and the lines under it: a table's rows of data

    def feed(self, number: int, line: str) -> None:
        heading = _UNIT_HEADING.match(line) if line.startswith("##") else None
        if heading:
            self.close()
            self.open(number, line, heading)
        elif not line.strip():
            return
        elif not self.in_unit:
            self.outside(number, line)
        elif self.draft is None:
            self.skipped(number, line)
        elif line[0] in " \t" or _LIST_ITEM.match(line):
            self.continue_field(number, line)
        elif line.startswith("#") or _RULE.match(line):
            self.end(number, line)
        elif self.draft is not None:
            self.start_field(self.draft, number, line)

    def outside(self, number: int, line: str) -> None:
        """A line outside any unit: ignored, unless it reads like a permission field or a
        misspelt unit heading."""
        found = permission_line(line) or permission_inline(line)
        if found is None and line.startswith("#") and self.below is not None:
            found = heading_over_value(line, self.below)  # `### Region` over `EU`
        if found is not None:
            name, label, col = found.name, found.label, found.column
            at = Token(name, number, col)
            if self.draft is not None:
                message = unread_message(name, label, "after the unit's end", reason=found.reason).replace(
                    "the unit is withdrawn", "the unit above and the next are withdrawn"
                )
                self.dangling = self.dangling or at
            else:
                message = unread_message(name, label, "outside a unit", reason=found.reason)
                if not self.seen_heading:
                    self.whole_file = True
                    message = message.replace("the unit is withdrawn", "every unit of this file is withdrawn")
            self.problem(Code.PERMISSION_OUTSIDE_UNIT, message, at)
        elif line.startswith("#") and _NEAR_HEADING.match(line):
            # The file's error, not the unit's above: the lines it heads are ignored either way.
            self.near_heading = len(self.diagnostics)
            self.diagnostics.append(
                Diagnostic(
                    code=Code.MALFORMED_LINE,
                    file=self.file,
                    line=number,
                    message="not a unit heading; did you mean '## Context Unit <id>'?",
                )
            )

    def skipped(self, number: int, line: str) -> None:
        """A line of a unit whose heading has no id: not read, but when it writes a permission
        field the heading's error is about a restricted unit, so the author's only."""
        if line.startswith("#") or _RULE.match(line):
            self.end(number, line)
        elif self.headless is not None and permission_line(line):
            self.diagnostics[self.headless] = for_author(self.diagnostics[self.headless : self.headless + 1])[0]

    def problem(self, code: Code, message: str, at: Token) -> None:
        """An error about the unit this line follows (which it withdraws), or about the file."""
        if self.near_heading is not None:
            # The misspelt heading was of a restricted unit: its error is the author's only.
            self.diagnostics[self.near_heading] = for_author(
                self.diagnostics[self.near_heading : self.near_heading + 1]
            )[0]
        if self.draft is not None:
            self.draft.diagnose(code, message, at)
        else:
            self.diagnostics.append(
                Diagnostic(code=code, message=message, file=self.file, line=at.line, col=at.col, author_only=True)
            )

    def end(self, number: int, line: str) -> None:
        """A heading or a rule ends the unit; the unit is built at the next unit heading, so a
        permission-like line after its end can still withdraw it."""
        self.flush_field()
        self.in_unit = False
        self.outside(number, line)

    def open(self, number: int, line: str, heading: re.Match[str]) -> None:
        self.in_unit = self.seen_heading = True
        self.near_heading = self.headless = None
        unit_id = heading.group("id").rstrip()
        if not unit_id:
            # The unit's fields are unusable without an id; skip them up to the next heading.
            self.headless = len(self.diagnostics)
            self.diagnostics.append(
                Diagnostic(
                    code=Code.MALFORMED_LINE, message="Context Unit heading without an id", file=self.file, line=number
                )
            )
            return
        self.draft = UnitDraft(Token(unit_id, number, heading.start("id") + 1), self.file)
        written = permission_heading(unit_id)
        if written is not None:
            name, label, col = written.name, written.label, written.column
            self.draft.diagnose(
                Code.PERMISSION_NOT_READ,
                unread_message(name, label, "in the unit heading"),
                Token(name, number, heading.start("id") + col),
            )
        if self.dangling is not None:
            message = (
                f"withdrawn: line {self.dangling.line} above this heading reads like a permission field "
                f"({self.dangling.text!r}) that is not read; move it into the unit it restricts"
            )
            self.draft.diagnose(Code.PERMISSION_OUTSIDE_UNIT, message, self.draft.id)
        self.dangling = None

    def start_field(self, draft: UnitDraft, number: int, line: str) -> None:
        after_field = self.field is not None
        if self.field is not None:
            draft.add_text(*self.field)
            self.field = None
        match = _FIELD.match(line)
        if match is None:
            written = permission_line(line) or permission_inline(line)
            if written is not None:
                name, label, col = written.name, written.label, written.column
                draft.diagnose(
                    Code.PERMISSION_NOT_READ, unread_message(name, label, "as a field"), Token(name, number, col)
                )
            else:
                message = "expected 'Field: value'" + _field_hint(line, after_field)
                draft.diagnose(Code.MALFORMED_LINE, message, Token(line, number, 1))
            return
        name, value = match.group("name", "value")
        value = value.rstrip()
        self.field = (token((name, number, 1)), [token((value, number, match.start("value") + 1))] if value else [])

    def continue_field(self, number: int, line: str) -> None:
        if self.draft is None:
            return
        if self.field is None:
            self.draft.diagnose(
                Code.MALFORMED_LINE, "continuation line without a field above it", Token(line, number, 1)
            )
            return
        found = header_label(line) if header_row(line, self.below, self.rows) else permission_line(line)
        if found is not None:
            name, label, col = found.name, found.label, found.column
            self.draft.diagnose(
                Code.PERMISSION_NOT_READ,
                unread_message(name, label, "as a continuation line", pair_row=pair_row(line), reason=found.reason),
                Token(name, number, col),
            )
        indent = len(line) - len(line.lstrip())
        self.field[1].append(Token(line.strip(), number, indent + 1))

    def flush_field(self) -> None:
        if self.draft is not None and self.field is not None:
            self.draft.add_text(*self.field)
        self.field = None

    def close(self) -> None:
        self.flush_field()
        if self.draft is not None:
            unit, diagnostics = self.draft.build()
            self.diagnostics.extend(diagnostics)
            if unit is not None:
                self.units.append(unit)
        self.draft = None
        self.in_unit = False


def read_markdown(text: str, file: str, first_line: int = 1) -> tuple[list[KnowledgeUnit], list[Diagnostic]]:
    """`first_line`: the line number of the text's first line (a block re-read on its own). Plain
    unit blocks take the fast path (core/cnl/markdown_plain.py), the rest this module's reader."""
    found = read_plain(text, file, first_line, _read_lines)
    if found is not None:
        return found
    reader = _read_lines(text, file, first_line)
    return ([] if reader.whole_file else reader.units), reader.diagnostics


def _read_lines(text: str, file: str, first_line: int) -> _Reader:
    """The reader after reading `text` line by line (its last unit closed)."""
    reader = _Reader(file)
    feed = reader.feed
    lines = source_lines(text)
    for number, (line, below) in enumerate(zip(lines, [*lines[1:], None]), start=first_line):
        # Most lines are blank or `Field: value`: a line that starts with an ASCII letter can
        # only be a field line (or text outside units), so it skips the other checks.
        if not line:
            continue
        if line[0] in _LETTERS and reader.in_unit:
            if reader.draft is not None:
                reader.start_field(reader.draft, number, line)
            else:
                reader.skipped(number, line)
        else:
            reader.below = below
            reader.rows = lines[number - first_line + 2 : number - first_line + 2 + TABLE_ROWS]
            feed(number, line)
    reader.close()
    return reader


def unit_heading_starts(text: str) -> list[int]:
    """Where each line of `text` that opens a unit starts. The reader keeps no state across such a
    line, so the text from one to the next reads the same alone as in its file (an edit re-reads
    only changed blocks)."""
    # Behind a line feed put before the text, each match starts where its line does in `text`.
    return [match.start() for match in _UNIT_HEADING_LINE.finditer("\n" + text)]


def preamble_speaks(text: str) -> bool:
    """Whether the reader reports anything about `text` read before any unit heading (a
    permission-like line, a misspelt unit heading): such text is in no unit block, so a file with
    it is read whole."""
    return any(
        permission_line(line) or permission_inline(line) or (line.startswith("#") and _NEAR_HEADING.match(line))
        for line in source_lines(text)
    )


def to_markdown(units: Iterable[KnowledgeUnit]) -> str:
    """Write units in the Markdown format; the Markdown reader reads them back unchanged."""
    return "\n".join(_unit_block(unit) for unit in units)


def _unit_block(unit: KnowledgeUnit) -> str:
    lines = [f"## Context Unit {unit.id}"]
    for key, value in _written_fields(unit):
        first, *rest = source_lines(str(value))
        lines.append(f"{FIELD_LABELS[key]}: {first}")
        lines.extend(f"  {line}" for line in rest)
    return "\n".join(lines) + "\n"


def _written_fields(unit: KnowledgeUnit) -> list[tuple[str, object]]:
    fields: list[tuple[str, object]] = [
        ("source_id", unit.source_id),
        ("chunk_id", unit.chunk_id),
        ("role", unit.role.value),
        ("topic", unit.topic),
    ]
    for key in ("title", "claim", "procedure", "condition", "utility_note", "region"):
        if getattr(unit, key) is not None:
            fields.append((key, getattr(unit, key)))
    for key in ("utility_acts", "phase_scopes", "acl"):
        if getattr(unit, key):
            fields.append((key, ", ".join(str(item) for item in getattr(unit, key))))
    if unit.relation is not None:  # has_triple
        fields += [("subject", unit.subject), ("relation", unit.relation.value), ("object", unit.object)]
    if unit.has_triple or unit.confidence != 1.0:
        fields.append(("confidence", repr(unit.confidence)))
    for key in ("effective_from", "effective_to"):
        if getattr(unit, key) is not None:
            fields.append((key, getattr(unit, key).isoformat()))
    return fields
