"""The one validation path for every reader: collect a unit's fields as written, then build it.

Readers feed a `UnitDraft` with field names and values plus their positions. The pydantic
`KnowledgeUnit` model decides what is valid; this module only normalises spelling (role case,
relation spacing) beforehand and, when the model refuses, translates its errors into typed
diagnostics that point at the offending field. A unit with any error is skipped; warnings load.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache, partial
from typing import Any, NamedTuple

from pydantic import ValidationError

from core.cnl.caps import CAPS
from core.cnl.permission_finding import LabelFinding
from core.cnl.permission_inline import (
    header_label,
    permission_across,
    permission_inline,
    without_id_parts,
)
from core.cnl.permission_names import permission_label
from core.cnl.permission_tables import TABLE_ROWS, header_row, pair_row
from core.cnl.permissions import permission_line, permission_value_start, unread_message
from core.cnl.source_text import Token
from core.infra.diagnostics import PERMISSION_CODES, Code, Diagnostic, Severity, did_you_mean, for_author
from core.units import Act, KnowledgeUnit, Relation, Role, check_identity_text

# Fields that restrict who sees a unit: written but left empty, they would make it public.
PERMISSION_FIELDS = ("acl", "region", "effective_from", "effective_to")
ID_SCHEMA = re.compile(r"(?P<source>[^\s:]+)::(?P<chunk>chunk-\d{3,})::unit-\d{3,}")


def squash_name(name: str) -> str:
    return re.sub(r"[\s_-]", "", name).lower()


# Written field name (any case, with or without `_`/`-`) → KnowledgeUnit attribute. The SOP
# `symbolic*` spellings and the Markdown short ones are accepted in every format.
FIELD_KEYS: dict[str, str] = {
    squash_name(name): key
    for key, names in {
        "id": ("Id",),
        "source_id": ("SourceId",),
        "chunk_id": ("ChunkId",),
        "role": ("Role",),
        "topic": ("Topic",),
        "claim": ("Claim",),
        "procedure": ("Procedure",),
        "condition": ("Condition",),
        "utility_acts": ("UtilityActs",),
        "utility_note": ("UtilityNote",),
        "phase_scopes": ("PhaseScopes",),
        "title": ("Title",),
        "subject": ("Subject", "SymbolicSubject"),
        "relation": ("Relation", "SymbolicRelation"),
        "object": ("Object", "SymbolicObject"),
        "confidence": ("Confidence", "SymbolicConfidence"),
        "acl": ("Acl",),
        "region": ("Region",),
        "effective_from": ("EffectiveFrom",),
        "effective_to": ("EffectiveTo",),
    }.items()
    for name in names
}
LIST_FIELDS = frozenset({"utility_acts", "phase_scopes", "acl"})
# The Markdown name of each attribute, used in messages and by the writer.
FIELD_LABELS: dict[str, str] = {
    "id": "Id",
    "source_id": "SourceId",
    "chunk_id": "ChunkId",
    "role": "Role",
    "topic": "Topic",
    "claim": "Claim",
    "procedure": "Procedure",
    "condition": "Condition",
    "utility_acts": "UtilityActs",
    "utility_note": "UtilityNote",
    "phase_scopes": "PhaseScopes",
    "title": "Title",
    "subject": "Subject",
    "relation": "Relation",
    "object": "Object",
    "confidence": "Confidence",
    "acl": "Acl",
    "region": "Region",
    "effective_from": "EffectiveFrom",
    "effective_to": "EffectiveTo",
}
_TRIPLE = ("subject", "relation", "object")
_VALUE_CODES = {
    "role": Code.INVALID_ROLE_VALUE,
    "relation": Code.INVALID_RELATION_VALUE,
    "utility_acts": Code.INVALID_ACT_VALUE,
    "confidence": Code.INVALID_CONFIDENCE_VALUE,
    "effective_from": Code.INVALID_DATE_VALUE,
    "effective_to": Code.INVALID_DATE_VALUE,
}
_ALLOWED = {
    "role": ", ".join(Role),
    "relation": ", ".join(Relation),
    "utility_acts": ", ".join(Act),
    "confidence": "a number from 0 to 1",
    "effective_from": "an ISO date such as 2026-04-01",
    "effective_to": "an ISO date such as 2026-04-01",
}
_CHOICES = {
    "role": [r.value for r in Role],
    "relation": [r.value for r in Relation],
    "utility_acts": [a.value for a in Act],
}
_ROLES_BY_FOLD = {role.value.casefold(): role.value for role in Role}


@lru_cache(maxsize=1024)
def field_key(name: str) -> str | None:
    """The KnowledgeUnit attribute a written field name stands for, or None if unknown."""
    return FIELD_KEYS.get(squash_name(name))


def split_id(unit_id: str) -> tuple[str, str]:
    """(source id, chunk id) implied by `<source>::chunk-NNN::unit-NNN`, leniently for other ids."""
    parts = unit_id.split("::")
    return parts[0], "::".join(parts[:2])


class _Field(NamedTuple):
    name: Token
    values: tuple[Token, ...]
    value: Any


_field = partial(tuple.__new__, _Field)
# Problems kept for `UnitDraft.build` when a unit's fields already fill `inputs.maxProblems`.
_BUILD_ROOM = 20  # as `token`: one per field of every unit


class UnitDraft:
    """One unit's fields as written; `build()` turns them into a KnowledgeUnit or diagnostics."""

    def __init__(self, unit_id: Token, file: str, *, prose: bool = False, check_id_format: bool = True):
        """`check_id_format`: warn about an id not shaped `<source>::chunk-NNN::unit-NNN` (not for
        JSON Lines corpora, whose ids are the corpus's own)."""
        self.id = unit_id
        self.file = file
        self.prose = prose
        self.check_id_format = check_id_format
        self._fields: dict[str, _Field] = {}
        self._diagnostics: list[Diagnostic] = []
        # Problems past `inputs.maxProblems`, counted, not built (by severity: is any an error).
        self._unlisted: dict[bool, int] = {True: 0, False: 0}
        self._permission_listed = False
        self._building = False

    def diagnose(self, code: Code, message: str, at: Token, severity: Severity = Severity.ERROR) -> None:
        # The unit's first permission problem is always listed: it decides who may count its problems.
        if self._full() and not (code in PERMISSION_CODES and not self._permission_listed):
            self._unlisted[severity is Severity.ERROR] += 1
            return
        self._permission_listed |= code in PERMISSION_CODES
        self._diagnostics.append(
            Diagnostic(code=code, message=message, file=self.file, line=at.line, col=at.col, severity=severity)
        )

    def record(self, diagnostics: Iterable[Diagnostic]) -> None:
        """Problems a reader found on this unit's lines; an error among them skips the unit."""
        self._diagnostics.extend(diagnostics)

    def add_text(self, name: Token, segments: Sequence[Token], *, read_as_written: bool = False) -> None:
        """A field written as text, one segment per physical line; list fields split on commas.
        `read_as_written`: the reader reshaped the text and checks it as written (`check_text`)."""
        key = self._accept(name)
        if key is None:
            return
        if key not in PERMISSION_FIELDS and not read_as_written:
            self._check_inline(key, segments)
        if key in LIST_FIELDS:
            items = tuple(item for segment in segments for item in _split_commas(segment))
            self._fields[key] = _Field(name, items, tuple(item.text for item in items))
            return
        if len(segments) == 1:  # the usual one-line field: no join
            text = segments[0].text.strip()
        else:
            separator = "\n" if key == "procedure" else " "
            text = separator.join(filter(None, (s.text.strip() for s in segments)))
        self._fields[key] = _field((name, tuple(segments[:1]), text))

    def add_items(self, name: Token, items: Sequence[Token], opened_at: Token) -> None:
        """A field written as an explicit list (`[a b]` in SOP); only list fields take one."""
        key = self._accept(name)
        if key is None:
            return
        if key not in LIST_FIELDS:
            self.diagnose(Code.MALFORMED_LINE, f"{FIELD_LABELS[key]} takes one value, not a list", opened_at)
            return
        if key not in PERMISSION_FIELDS:
            self._check_inline(key, items)
            self._check_item_starts(key, items)
        self._fields[key] = _Field(name, tuple(items), tuple(item.text for item in items))

    def _check_item_starts(self, key: str, items: Sequence[Token]) -> None:
        """An item of an explicit list starts where a bulleted line does: a label position
        (`set $k1 phaseScopes ["Region - EU"]`)."""
        for item in items:
            found = permission_line(item.text)
            if found is not None and not any(
                d.line == item.line and d.code in PERMISSION_CODES for d in self._diagnostics
            ):
                self._unread(found, f"as an item of the {FIELD_LABELS[key]} list", item)

    def check_text(self, key: str, segments: Sequence[Token]) -> None:
        """The check `add_text` makes on a field's value, for text the reader reshaped before
        handing it over (JSON Lines squashes a text's tabs and line breaks: `Acl<TAB>staff`)."""
        self._check_inline(key, segments)

    def _check_inline(self, key: str, segments: Sequence[Token]) -> None:
        """A permission field written inside another field's value (`Claim: … Acl: staff`,
        `set $k1 claim "… (Region=EU)"`) is not read as one: an error that withdraws the unit, as
        in plain text, since publishing it would ignore the restriction its author wrote."""
        if key == "chunk_id":  # `regions::chunk-000` is the id schema's, not a Region
            segments = [Token(without_id_parts(segment.text), segment.line, segment.col) for segment in segments]
        for number, (segment, after) in enumerate(zip(segments, [*segments[1:], None])):
            rows = [row.text for row in segments[number + 2 : number + 2 + TABLE_ROWS]]
            if after is not None and header_row(segment.text, after.text, rows):
                found = header_label(segment.text)  # `Region<TAB>Population` over rows of values
                after = None
            elif (found := permission_inline(segment.text)) is None and number == 0:
                found = permission_value_start(segment.text)  # `Condition: Region: EU`
            if found is None and after is not None:
                found = permission_across(segment.text, after.text)  # `… Effective` / `  To: 2020-01-01`
            if found is None or any(d.line == segment.line and d.code in PERMISSION_CODES for d in self._diagnostics):
                continue  # a line the reader flagged already (a bulleted `- Acl: x`) is named once
            self._unread(found, f"inside the {FIELD_LABELS[key]} value", segment)

    def _unread(self, found: LabelFinding, where: str, at: Token) -> None:
        """An error withdrawing the unit for a label `found` in the text of `at` (name as
        written, the field it reads like, its column there), which the reader does not read."""
        written, label, col = found.name, found.label, found.column
        self.diagnose(
            Code.PERMISSION_NOT_READ,
            unread_message(written, label, where, pair_row=pair_row(at.text), reason=found.reason),
            Token(written, at.line, at.col + col - 1),
        )

    def _accept(self, name: Token) -> str | None:
        key = field_key(name.text)
        if key is None:
            label = permission_label(name.text)
            if label is not None:
                self.diagnose(Code.PERMISSION_NOT_READ, unread_message(name.text, label, "as a field"), name)
                return None
            hint = "" if self._full() else did_you_mean(name.text, FIELD_LABELS.values())
            self.diagnose(Code.UNKNOWN_FIELD, f"unknown field {name.text!r}{hint}", name)
            return None
        if key in self._fields:
            first = self._fields[key].name
            self.diagnose(Code.DUPLICATE_FIELD, f"{FIELD_LABELS[key]} is already set on line {first.line}", name)
            return None
        return key

    def build(self) -> tuple[KnowledgeUnit | None, list[Diagnostic]]:
        self._building = True
        data = self._data()
        unit = None
        try:
            unit = KnowledgeUnit.model_validate(data)
        except ValidationError as exc:
            self._explain(exc, data)
        self._check_id()
        self._check_dates(unit)
        self._check_permissions()
        if any(self._unlisted.values()):
            severity = Severity.ERROR if self._unlisted[True] else Severity.WARNING
            unlisted = sum(self._unlisted.values())
            message = f"{unlisted:,} more problem(s) of this unit are not listed (inputs.maxProblems is {CAPS.max_problems:,})"
            self._diagnostics.append(
                Diagnostic(
                    code=Code.TOO_MANY_PROBLEMS,
                    message=message,
                    file=self.file,
                    line=self.id.line,
                    col=self.id.col,
                    severity=severity,
                )
            )
        diagnostics = sorted(self._diagnostics, key=lambda d: (d.line, d.col))
        if self._touches_permissions(diagnostics):
            diagnostics = for_author(diagnostics)
        if any(d.is_error for d in diagnostics):
            return None, diagnostics
        return unit, diagnostics

    def _full(self) -> bool:
        # Room for a permission problem and the one saying how many were left out, and while the
        # fields are read for what building the unit finds (a required field missing), which says
        # more than the thousandth unknown field.
        room = 2 if self._building else 2 + _BUILD_ROOM
        return len(self._diagnostics) >= CAPS.max_problems - room

    def _touches_permissions(self, diagnostics: list[Diagnostic]) -> bool:
        """Whether the unit writes a permission field or a look-alike of one: then it was meant to
        be restricted, and what is wrong with it is the author's business only."""
        return any(key in self._fields for key in PERMISSION_FIELDS) or any(
            d.code in PERMISSION_CODES for d in diagnostics
        )

    def _data(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            key: field.value for key, field in self._fields.items() if key != "id" and field.value not in ("", ())
        }
        for key in NORMALISED.intersection(data):
            data[key] = normalise(key, data[key])
        if "source_id" not in data or "chunk_id" not in data:
            source, chunk = split_id(self.id.text)
            data.setdefault("source_id", source)
            data.setdefault("chunk_id", chunk)
        data["id"] = self.id.text
        # A dict, not a SourceLocation: the model validates it in the same (compiled) pass.
        data["location"] = {"file": self.file, "line": self.id.line, "col": self.id.col}
        if self.prose:
            data["location"]["prose"] = True
        return data

    def _explain(self, exc: ValidationError, data: dict[str, Any]) -> None:
        shape_explained = self._explain_shape(data)
        for error in exc.errors():
            loc = error["loc"]
            if not loc:
                if not shape_explained:
                    self.diagnose(Code.MALFORMED_LINE, error["msg"], self.id)
                continue
            key = str(loc[0])
            if error["type"] == "missing":
                at = self._fields[key].name if key in self._fields else self.id
                self.diagnose(Code.MISSING_REQUIRED_FIELD, f"{FIELD_LABELS[key]} is required", at)
                continue
            at = self._value_at(key, loc[1] if len(loc) > 1 and isinstance(loc[1], int) else 0)
            detail = f"expected {_ALLOWED[key]}" if key in _ALLOWED else error["msg"]
            if key in _CHOICES:
                detail += did_you_mean(at.text, _CHOICES[key])
            label = FIELD_LABELS.get(key, key)
            self.diagnose(_VALUE_CODES.get(key, Code.MALFORMED_LINE), f"invalid {label} {at.text!r}: {detail}", at)

    def _value_at(self, key: str, index: int) -> Token:
        """The written value (list item `index`) of a field, or the unit's id if it has none."""
        field = self._fields.get(key)
        if field and index < len(field.values):
            return field.values[index]
        return self.id

    def _explain_shape(self, data: dict[str, Any]) -> bool:
        """Say which cross-field rule of KnowledgeUnit the data breaks; True if one was named."""
        before = len(self._diagnostics)
        has_claim, has_procedure = "claim" in data, "procedure" in data
        if has_claim and has_procedure:
            later = max(self._fields["claim"].name, self._fields["procedure"].name, key=lambda t: (t.line, t.col))
            self.diagnose(Code.CLAIM_AND_PROCEDURE_CONFLICT, "a unit has a Claim or a Procedure, not both", later)
        elif not has_claim and not has_procedure:
            self.diagnose(Code.MISSING_REQUIRED_FIELD, "a Claim or a Procedure is required", self.id)
        elif data.get("role") in _ROLES_BY_FOLD.values() and has_procedure != (data["role"] == Role.PROCEDURE.value):
            message = (
                "a Procedure needs Role Procedure" if has_procedure else "Role Procedure needs a Procedure, not a Claim"
            )
            self.diagnose(Code.PROCEDURE_ROLE_MISMATCH, message, self._fields["role"].values[0])
        present = [key for key in _TRIPLE if key in data]
        if present and len(present) < len(_TRIPLE):
            missing = ", ".join(FIELD_LABELS[key] for key in _TRIPLE if key not in data)
            first = min((self._fields[key].name for key in present), key=lambda t: (t.line, t.col))
            self.diagnose(
                Code.INCOMPLETE_SYMBOLIC_FACT, f"Subject, Relation and Object go together; missing {missing}", first
            )
        return len(self._diagnostics) > before

    def _check_id(self) -> None:
        written = self._fields.get("id")
        if written and written.value != self.id.text:
            self.diagnose(
                Code.INVALID_ID_FORMAT,
                f"Id {written.value!r} differs from the unit's id {self.id.text!r}; the unit's id is used",
                written.values[0] if written.values else written.name,
                Severity.WARNING,
            )
        if self.check_id_format and not ID_SCHEMA.fullmatch(self.id.text):
            self.diagnose(
                Code.INVALID_ID_FORMAT,
                f"id {self.id.text!r} does not follow <source>::chunk-NNN::unit-NNN",
                self.id,
                Severity.WARNING,
            )

    def _check_permissions(self) -> None:
        """An empty permission field is an error (fail closed: the author meant to restrict the
        unit), and an Acl tag or Region no caller can hold is named, since nobody sees it by that."""
        for key in PERMISSION_FIELDS:
            field = self._fields.get(key)
            if field is not None and field.value in ("", ()):
                self.diagnose(
                    Code.MISSING_REQUIRED_FIELD,
                    f"{FIELD_LABELS[key]} is empty: write a value or remove the line "
                    "(an empty one would make the unit visible to more callers)",
                    field.name,
                )
        acl, region = self._fields.get("acl"), self._fields.get("region")
        written = [("tag", token.text, token) for token in (acl.values if acl else ())]
        if region is not None and region.value:
            written.append(("region", region.value, region.values[0] if region.values else region.name))
        for what, text, at in written:
            try:
                check_identity_text(text, what)
            except ValueError as exc:
                self.diagnose(Code.MALFORMED_LINE, f"{exc}, so no caller can hold it", at, Severity.WARNING)

    def _check_dates(self, unit: KnowledgeUnit | None) -> None:
        # Valid on their own but contradictory: the unit could never be visible to anyone.
        if unit and unit.effective_from and unit.effective_to and unit.effective_from > unit.effective_to:
            self.diagnose(
                Code.INVALID_DATE_VALUE,
                "EffectiveTo is before EffectiveFrom, so the unit is never visible",
                self._fields["effective_to"].values[0],
                Severity.WARNING,
            )


NORMALISED = frozenset({"role", "relation", "utility_acts"})


def normalise(key: str, value: Any) -> Any:
    """Accept the spellings people write (role in any case, `depends on`); the model checks the rest."""
    if key == "role":
        return _ROLES_BY_FOLD.get(value.casefold(), value)
    if key == "relation":
        return re.sub(r"[\s-]+", "_", value.strip()).lower()
    if key == "utility_acts":
        return tuple(act.lower() for act in value)
    return value


def _split_commas(segment: Token) -> list[Token]:
    items = []
    offset = 0
    for part in segment.text.split(","):
        text = part.strip()
        if text:
            items.append(Token(text, segment.line, segment.col + offset + len(part) - len(part.lstrip())))
        offset += len(part) + 1
    return items
