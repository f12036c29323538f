"""JSON Lines (`.jsonl`) → knowledge units: one document per line, in the BEIR corpus shape.

Each non-blank line is one JSON object. Keys are read case-insensitively and without `_`/`-`
(`effectiveTo`, `effective_to`, `EffectiveTo` are one key):
- `_id` (or `id`): the unit id, required;
- `title` → topic; `text` → claim (the procedure when `role` is Procedure). A document without a title gets the first eight words of its
  text as topic (a unit always has one), and one without text gets its title as claim;
- optional: `role` (default Description), `acl` (a tag or a list of tags), `region`,
  `effectiveFrom` and `effectiveTo` (ISO dates), checked by the validator every format shares
  (core/cnl/validate.py): written but empty (`"acl": []`, `"region": ""`, `null`) is an error;
- `metadata` (BEIR's) is ignored, unless it holds a permission-like key at any depth, as a key or
  as a list of pairs (`[["acl", "staff"]]`), which is an error; any other key is an error, since a
  misspelt or look-alike permission key (`"acls"`, `"tags"`, `"Regoin"`) ignored would publish the
  document; so is a key written twice in one object, exactly or in another case
  (core/cnl/json_keys.py).

A bad line is one diagnostic (or a few) with its file and line; the lines around it still load.
"""

from __future__ import annotations

import json
from pathlib import PurePath

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.cnl.caps import CAPS
from core.cnl.json_keys import loads_unique, permission_keys, raw_permission_key
from core.cnl.permission_inline import header_label, permission_heading
from core.cnl.permission_names import permission_label
from core.cnl.permission_tables import TABLE_ROWS, header_row
from core.cnl.permissions import permission_line, unread_message
from core.cnl.source_text import Token
from core.cnl.validate import UnitDraft, squash_name
from core.infra.diagnostics import PERMISSION_CODES, Code, Diagnostic, did_you_mean, for_author
from core.infra.json_limits import TooDeep, check_depth, long_number
from core.infra.json_locate import Locator, value_column
from core.units import KnowledgeUnit

_TOPIC_WORDS = 8
# Folded key → record field; `metadata` is read and dropped.
_KEYS = {
    "id": "id",
    "title": "title",
    "text": "text",
    "role": "role",
    "acl": "acl",
    "region": "region",
    "effectivefrom": "effective_from",
    "effectiveto": "effective_to",
    "metadata": "metadata",
}
_NAMES = ("_id", "title", "text", "role", "acl", "region", "effectiveFrom", "effectiveTo", "metadata")


class EmptyDocument(ValueError):
    """A document with neither title nor text: its own code, so `eval --beir` can skip and count it."""


class JsonlRecord(BaseModel):
    """One line's JSON types; what the values mean is the shared validator's business."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    title: str = ""
    text: str = ""
    role: str = "Description"
    # Written as null: as empty as [] (the validator refuses both).
    acl: tuple[str, ...] | None = ()
    region: str | None = None
    effective_from: str | None = None
    effective_to: str | None = None
    metadata: object = None

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, value: object) -> object:
        # BEIR ids are sometimes written as numbers.
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("acl", mode="before")
    @classmethod
    def _one_tag(cls, value: object) -> object:
        return (value,) if isinstance(value, str) else value

    def topic_and_claim(self) -> tuple[str, str]:
        title, text = " ".join(self.title.split()), " ".join(self.text.split())
        if not title and not text:
            raise EmptyDocument("a document needs a title or a text")
        return title or " ".join(text.split()[:_TOPIC_WORDS]), text or title


class _LineProblems(Exception):
    def __init__(self, diagnostics: list[Diagnostic]):
        super().__init__(diagnostics[0].message)
        self.diagnostics = diagnostics


def read_jsonl(text: str, file: str, first_line: int = 1) -> tuple[list[KnowledgeUnit], list[Diagnostic]]:
    """The units of `text`, whose first line is line `first_line` of `file` (a piece of a large
    file is read at a time: core/cnl/source.py `read_pieces`)."""
    units: list[KnowledgeUnit] = []
    diagnostics: list[Diagnostic] = []
    source = PurePath(file).stem or "jsonl"
    for number, line in enumerate(text.split("\n"), start=first_line):
        if not line.strip():
            continue
        if number > CAPS.max_jsonl_lines:
            diagnostics.append(too_many_lines(file, number))
            break
        if len(line) > CAPS.max_jsonl_line_chars:
            diagnostics.append(_too_long(line, file, number))
            continue
        unit, problems = _line(line, source, file, number)
        if unit is not None:
            units.append(unit)
        elif raw_permission_key(line) or any(d.code in PERMISSION_CODES for d in problems):
            # Broken or not, a line that writes a permission key is a restricted unit's.
            problems = for_author(problems)
        diagnostics.extend(problems)
    return units, diagnostics


def too_many_lines(file: str, number: int) -> Diagnostic:
    message = f"more than {CAPS.max_jsonl_lines:,} lines (inputs.maxJsonlLines); this line and the rest are not read"
    return _problem(Code.FILE_TOO_LARGE, message, file, number)


def _too_long(line: str, file: str, number: int) -> Diagnostic:
    message = (
        f"document of {len(line):,} characters is over the {CAPS.max_jsonl_line_chars:,} cap "
        "(inputs.maxJsonlLineChars); not read"
    )
    return _problem(Code.FILE_TOO_LARGE, message, file, number)


def _line(line: str, source: str, file: str, number: int) -> tuple[KnowledgeUnit | None, list[Diagnostic]]:
    try:
        return _unit(line, source, file, number)
    except json.JSONDecodeError as exc:
        return None, [_problem(Code.MALFORMED_LINE, f"not JSON: {exc.msg}", file, number, exc.colno)]
    except TooDeep as exc:
        return None, [_problem(Code.MALFORMED_LINE, str(exc), file, number, exc.col)]
    except ValidationError as exc:
        message = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'line'}: {e['msg']}" for e in exc.errors())
        return None, [_problem(Code.MISSING_REQUIRED_FIELD, message, file, number)]
    except _LineProblems as exc:
        return None, exc.diagnostics
    except EmptyDocument as exc:
        return None, [_problem(Code.EMPTY_DOCUMENT, str(exc), file, number)]
    except ValueError as exc:
        if (found := long_number(line)) is not None:
            return None, [_problem(Code.MALFORMED_LINE, found[0], file, number, found[1] + 1)]
        return None, [_problem(Code.MALFORMED_LINE, str(exc), file, number)]


def _unit(line: str, source: str, file: str, number: int) -> tuple[KnowledgeUnit | None, list[Diagnostic]]:
    check_depth(line)
    data = loads_unique(line)
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, found {type(data).__name__}")
    record = JsonlRecord.model_validate(_fields(data, line, file, number))
    topic, claim = record.topic_and_claim()
    at = Token(record.id, number, 1)
    draft = UnitDraft(at, file, check_id_format=False)

    def put(name: str, value: str | None, key: str = "") -> None:
        if value is not None:
            # A text with tabs or line breaks is read for labels as written (below), not squashed:
            # squashed, a table's header row and its delimiter row would read as one row of cells.
            written = {"title": record.title, "text": record.text}.get(key, "")
            draft.add_text(
                Token(name, number, 1),
                [Token(value, number, _value_col(line, data, key, value))],
                read_as_written=_squashed(written),
            )

    if (found := permission_heading(record.id)) is not None:  # `"_id": "memo-7 Region - EU"`
        draft.diagnose(Code.PERMISSION_NOT_READ, unread_message(found.name, found.label, "in the document's id"), at)
    put("SourceId", source)
    put("ChunkId", record.id)
    put("Role", record.role)
    put("Topic", topic, "title" if record.title.strip() else "text")
    # A Procedure's text is its procedure, as the unit model requires.
    put(
        "Procedure" if record.role.strip().casefold() == "procedure" else "Claim",
        claim,
        "text" if record.text.strip() else "title",
    )
    for key, raw in (("title", record.title), ("text", record.text)):
        if _squashed(raw):
            # Squashed above: a separator that was a tab or a line break is read as written.
            lines = _raw_lines(raw, number, line, data, key)
            for index, later in enumerate(lines[1:], start=2):  # a line of the text starts where a label may stand
                rows = [row.text for row in lines[index : index + 1 + TABLE_ROWS]]
                header = bool(rows) and header_row(later.text, rows[0], rows[1:])
                if (found := header_label(later.text) if header else permission_line(later.text)) is not None:
                    draft.diagnose(
                        Code.PERMISSION_NOT_READ,
                        unread_message(
                            found.name, found.label, f"at a line start of the {key!r} text", reason=found.reason
                        ),
                        later,
                    )
            draft.check_text("claim" if key == "text" else "topic", lines)
    if "acl" in record.model_fields_set:
        # `""` and `[" "]` are as empty as `[]`, as `Acl: ,` is in Markdown.
        tags = [Token(tag.strip(), number, 1) for tag in record.acl or () if tag.strip()]
        draft.add_items(Token("acl", number, 1), tags, at)
    put("Region", record.region)
    put("EffectiveFrom", record.effective_from)
    put("EffectiveTo", record.effective_to)
    for key in ("region", "effective_from", "effective_to"):
        if key in record.model_fields_set and getattr(record, key) is None:
            put(key, "")  # null: written, and empty
    return draft.build()


def _squashed(text: str) -> bool:
    """Whether squashing `text` (`topic_and_claim`) reshaped it: a tab or a line break in it."""
    return "\t" in text or "\n" in text or "\r" in text


def _raw_lines(raw: str, number: int, line: str, data: dict, key: str) -> list[Token]:
    """A text as written, one token per line of it (each at the text's column)."""
    col = _value_col(line, data, key, ":")
    return [Token(part, number, col) for part in raw.split("\n") if part.strip()]


def _value_col(line: str, data: dict, key: str, value: str) -> int:
    """The column where the string of the record's `key` starts, so that an error inside it (a
    permission field written in a text) points into the line; 1 when no error can be there."""
    if not key or (":" not in value and "=" not in value):
        return 1
    written = next((k for k in data if _KEYS.get(squash_name(k)) == key), None)
    if written is None:
        return 1
    col = value_column(line, written)
    return 1 if col is None else col + 1  # after the opening quote


def _fields(data: dict, line: str, file: str, number: int) -> dict:
    """The record's keys folded to their field names; an unknown or repeated key is an error."""
    fields: dict = {}
    problems = []
    for key, value in data.items():
        name = _KEYS.get(squash_name(key))
        if name is None or name in fields:
            code = Code.PERMISSION_NOT_READ if name is None and permission_label(key) else Code.UNKNOWN_FIELD
            # At the key, so that it can be found in a long document's line.
            col = Locator(line).position((key,))[1] if code is Code.UNKNOWN_FIELD else 1
            problems.append(_problem(code, _key_problem(key, name), file, number, col))
        else:
            fields[name] = value
    # BEIR's metadata is dropped, and nothing but `acl` holds a list: a permission key at any
    # depth below the top level would be dropped with it.
    for key, value in data.items():
        for path, written, label in permission_keys(value, key, strings=_KEYS.get(squash_name(key)) == "metadata"):
            message = unread_message(written, label, f"at {path!r}, which is not read")
            problems.append(_problem(Code.PERMISSION_NOT_READ, message, file, number))
    if problems:
        raise _LineProblems(problems)
    return fields


def _key_problem(key: str, name: str | None) -> str:
    if name is not None:
        return f"key {key!r} repeats {name!r} (keys are case-insensitive)"
    label = permission_label(key)
    if label is not None:
        return unread_message(key, label, "as a key")
    return f"unknown key {key!r}{did_you_mean(key, _NAMES)}; the document is not read"


def _problem(code: Code, message: str, file: str, line: int, col: int = 1) -> Diagnostic:
    return Diagnostic(code=code, message=message, file=file, line=line, col=col)
