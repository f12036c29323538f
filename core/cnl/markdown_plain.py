"""The Markdown reader's fast path: unit blocks in the layout `to_markdown` writes.

A cold open reads every unit of a large KB, and the line reader (core/cnl/markdown.py) costs
Python work per line plus a draft object, tokens and field records per unit (~20 µs a unit). Most
blocks are plain: `## Context Unit <id>`, then only `Field: value` lines, then blank lines up to
the next heading. One regex finds those blocks over the whole file and one `findall` splits each
block's field lines; the unit is then built from the same data the line reader's `UnitDraft`
would hand pydantic, with every check it makes. A block for which any check would say something
(an unknown or repeated field, an empty permission field, a permission field written inside a
value, an id off the `<source>::chunk-NNN::unit-NNN` shape, a model error, contradictory dates, a
tag no caller can hold), and every stretch of text that is not a plain block (prose, lists,
continuation lines, other headings), is read by the line reader with its true line numbers,
which reports it with file:line as before. The reader keeps no state across a unit heading
except a permission-like line after a unit's end (it withdraws the next unit too) and one
before the first unit (it withdraws every unit): when the line reader meets either, the whole
text goes to it. Same units and diagnostics as the line reader (tests/unit/cnl/test_cnl_markdown_plain.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Protocol

from pydantic import ValidationError

from core.cnl.permission_inline import labelless, permission_heading, permission_inline
from core.cnl.permissions import permission_value_start
from core.cnl.validate import ID_SCHEMA, LIST_FIELDS, NORMALISED, PERMISSION_FIELDS, field_key, normalise, split_id
from core.infra.diagnostics import Diagnostic
from core.units import KnowledgeUnit, check_identity_text

# A plain block: the heading as `to_markdown` writes it (one space before the id, whose first
# character is not a blank), `Field: value` lines, then empty lines. Anchored at line starts.
_PLAIN_BLOCK = re.compile(
    r"^## Context Unit (?P<id>[^ \t\n][^\n]*)\n(?P<fields>(?:[A-Za-z][\w-]*[ \t]*:[^\n]*(?:\n|\Z))*)\n*",
    re.MULTILINE,
)
# The line reader's `_FIELD` (name, then the value up to the line's end), per line of a block.
_FIELD_LINE = re.compile(r"^([A-Za-z][\w-]*)[ \t]*:[ \t]*([^\n]*)", re.MULTILINE)
# Where the id starts on a plain heading line: the line reader's column for it.
_ID_COLUMN = len("## Context Unit ") + 1


class LineRead(Protocol):
    """What the line reader leaves after reading a text: its units and diagnostics, and the state
    that would reach past the text (see the module docstring)."""

    @property
    def units(self) -> list[KnowledgeUnit]: ...

    @property
    def diagnostics(self) -> list[Diagnostic]: ...

    @property
    def whole_file(self) -> bool: ...

    @property
    def dangling(self) -> object | None: ...


def read_plain(
    text: str, file: str, first_line: int, read_lines: Callable[[str, str, int], LineRead]
) -> tuple[list[KnowledgeUnit], list[Diagnostic]] | None:
    """`text`'s units and diagnostics, plain blocks built here and the rest read by `read_lines`;
    None when the line reader must read the whole text (see the module docstring)."""
    if "\r" in text:  # the line reader drops a carriage return before each line feed
        return None
    blocks = list(_PLAIN_BLOCK.finditer(text))
    units: list[KnowledgeUnit] = []
    diagnostics: list[Diagnostic] = []
    line, counted = first_line, 0  # the line number at offset `counted`
    pending, pending_line = 0, first_line  # where the text not read yet starts, and its line
    for number, block in enumerate(blocks):
        start, end = block.span()
        # Plain only when the next block starts where this one ends: any other line in between
        # belongs to this unit (a continuation, a list) or starts something the line reader reads.
        if end != (blocks[number + 1].start() if number + 1 < len(blocks) else len(text)):
            continue
        line += text.count("\n", counted, start)
        counted = start
        unit = _plain_unit(block.group("id"), block.group("fields"), file, line)
        if unit is None:
            continue  # read by the line reader with the text up to the next plain block
        if pending < start and not _read_rest(text[pending:start], file, pending_line, read_lines, units, diagnostics):
            return None
        units.append(unit)
        line += text.count("\n", start, end)
        pending, pending_line, counted = end, line, end
    if pending < len(text) and not _read_rest(
        text[pending:], file, pending_line, read_lines, units, diagnostics, last=True
    ):
        return None
    return units, diagnostics


def _read_rest(
    text: str,
    file: str,
    line: int,
    read_lines: Callable[[str, str, int], LineRead],
    units: list[KnowledgeUnit],
    diagnostics: list[Diagnostic],
    *,
    last: bool = False,
) -> bool:
    """Read a stretch with the line reader into `units` and `diagnostics`; False when its state
    would reach past the stretch, so the whole text must be read by it instead."""
    read = read_lines(text, file, line)
    if read.whole_file or (read.dangling is not None and not last):
        return False
    units.extend(read.units)
    diagnostics.extend(read.diagnostics)
    return True


def _plain_unit(written_id: str, fields: str, file: str, line: int) -> KnowledgeUnit | None:
    """The unit `UnitDraft` builds from these field lines when it reports nothing, else None."""
    unit_id = written_id.rstrip()
    if not unit_id or not ID_SCHEMA.fullmatch(unit_id):
        return None
    # An ASCII id of the schema's shape holds a label only with `=` (`::` is no separator).
    if ("=" in unit_id or not unit_id.isascii()) and permission_heading(unit_id) is not None:
        return None
    pairs = _FIELD_LINE.findall(fields)
    keys = [key for key in (field_key(name) for name, _ in pairs) if key is not None]
    if len(keys) != len(pairs) or len(set(keys)) != len(keys):
        return None  # an unknown or repeated field: the line reader names it
    data: dict[str, Any] = {}
    for key, (_, value) in zip(keys, pairs):
        value = value.rstrip()
        if (
            key not in PERMISSION_FIELDS
            and not labelless(value)
            and (permission_inline(value) is not None or permission_value_start(value) is not None)
        ):
            return None
        if key in LIST_FIELDS:
            written: Any = tuple(item for item in (part.strip() for part in value.split(",")) if item)
        else:
            written = value.strip()
        if key == "id":
            if written != unit_id:
                return None
        elif written:
            data[key] = written
        elif key in PERMISSION_FIELDS:
            return None
    for key in NORMALISED.intersection(data):
        data[key] = normalise(key, data[key])
    if "source_id" not in data or "chunk_id" not in data:
        source, chunk = split_id(unit_id)
        data.setdefault("source_id", source)
        data.setdefault("chunk_id", chunk)
    data["id"] = unit_id
    data["location"] = {"file": file, "line": line, "col": _ID_COLUMN}
    try:
        unit = KnowledgeUnit.model_validate(data)
    except ValidationError:
        return None
    if unit.effective_from and unit.effective_to and unit.effective_from > unit.effective_to:
        return None
    try:
        for tag in unit.acl:
            check_identity_text(tag, "tag")
        if unit.region:
            check_identity_text(unit.region, "region")
    except ValueError:
        return None
    return unit
