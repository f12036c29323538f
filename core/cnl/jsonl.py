"""JSON Lines (`.jsonl`) → knowledge units: one document per line, in the BEIR corpus shape.

Each non-blank line is one JSON object:
- `_id` (or `id`): the unit id, required;
- `title` → topic; `text` → claim (the procedure when `role` is Procedure). A document without a title gets the first eight words of its
  text as topic (a unit always has one), and one without text gets its title as claim;
- optional: `role` (default Description), `acl` (a tag or a list of tags), `region`,
  `effectiveFrom` / `effective_from` and `effectiveTo` / `effective_to` (ISO dates). Permission
  fields are filtered before any ranking, exactly as for units of the other formats;
- anything else (BEIR's `metadata`, for one) is ignored.

A bad line is one diagnostic with its file and line; the lines around it still load.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import PurePath

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.diagnostics import Code, Diagnostic
from core.units import KnowledgeUnit, Role, SourceLocation

_TOPIC_WORDS = 8


class JsonlRecord(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str = Field(validation_alias=AliasChoices("_id", "id"), min_length=1)
    title: str = ""
    text: str = ""
    role: Role = Role.DESCRIPTION
    acl: tuple[str, ...] = ()
    region: str | None = None
    effective_from: dt.date | None = Field(default=None, validation_alias=AliasChoices("effectiveFrom", "effective_from"))
    effective_to: dt.date | None = Field(default=None, validation_alias=AliasChoices("effectiveTo", "effective_to"))

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
            raise ValueError("a document needs a title or a text")
        return title or " ".join(text.split()[:_TOPIC_WORDS]), text or title


def read_jsonl(text: str, file: str) -> tuple[list[KnowledgeUnit], list[Diagnostic]]:
    units: list[KnowledgeUnit] = []
    diagnostics: list[Diagnostic] = []
    source = PurePath(file).stem or "jsonl"
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            units.append(_unit(line, source, file, number))
        except json.JSONDecodeError as exc:
            diagnostics.append(_problem(Code.MALFORMED_LINE, f"not JSON: {exc.msg}", file, number, exc.colno))
        except ValidationError as exc:
            message = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'line'}: {e['msg']}" for e in exc.errors())
            diagnostics.append(_problem(Code.MISSING_REQUIRED_FIELD, message, file, number))
        except ValueError as exc:
            diagnostics.append(_problem(Code.MALFORMED_LINE, str(exc), file, number))
    return units, diagnostics


def _unit(line: str, source: str, file: str, number: int) -> KnowledgeUnit:
    data = json.loads(line)
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, found {type(data).__name__}")
    record = JsonlRecord.model_validate(data)
    topic, claim = record.topic_and_claim()
    # A Procedure's text is its procedure, as the unit model requires.
    body = {"procedure": claim} if record.role is Role.PROCEDURE else {"claim": claim}
    return KnowledgeUnit(
        id=record.id,
        source_id=source,
        chunk_id=record.id,
        role=record.role,
        topic=topic,
        **body,
        acl=record.acl,
        region=record.region,
        effective_from=record.effective_from,
        effective_to=record.effective_to,
        location=SourceLocation(file=file, line=number),
    )


def _problem(code: Code, message: str, file: str, line: int, col: int = 1) -> Diagnostic:
    return Diagnostic(code=code, message=message, file=file, line=line, col=col)
