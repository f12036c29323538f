"""The labelled-queries file (`queries.json`, docs/queries.md): one validated `QuerySpec` per
question, with every problem reported at the file's line and column."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, TypeAdapter, ValidationError, model_validator
from pydantic_core import ErrorDetails

from core.infra.config import ConfigError, field_names, read_json
from core.infra.diagnostics import Code, Diagnostic, did_you_mean, did_you_mean_id
from core.infra.json_locate import Locator
from core.units import MAX_CALLER_TAGS, Caller, Region, Tag

AnswerStatus = Literal["grounded", "weak", "no-context"]
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class _Spec(BaseModel):
    # extra="forbid": a misspelt "must_not_apear" would otherwise silently disable a safety check.
    model_config = ConfigDict(frozen=True, extra="forbid")


class CallerSpec(_Spec):
    # The caller's own validated types, so a bad tag is reported with the queries file's line.
    tags: frozenset[Tag] = Field(default=frozenset(), max_length=MAX_CALLER_TAGS)
    region: Region | None = None
    as_of: dt.date | None = None


class QuerySpec(_Spec):
    """One labelled question; no `caller` means the public caller, as for `mrptui ask`."""

    id: Text
    question: Text
    caller: CallerSpec | None = None
    expect_evidence: tuple[Text, ...]
    must_not_appear: tuple[Text, ...]
    expect_answer_mentions: tuple[Text, ...] = ()
    expect_answer_excludes: tuple[Text, ...] = ()
    expect_status: AnswerStatus | None = None
    # Gold answers: the lead is scored by SQuAD-normalised exact match and token F1 against the best.
    expect_answer: tuple[Text, ...] = ()
    # The question has no answer in the KB: the run must not be grounded and must say it cannot tell.
    expect_abstain: bool = False
    kind: str | None = None
    # Queries naming the same conversation are asked in file order as its turns, one session
    # with memory each (per caller), as `mrptui ask --session NAME` would: "Where did she live?"
    # after "Who is Anna?". None: asked alone.
    conversation: Text | None = None
    # The answer form the question asks for (yes_no, entity, list, ...): answer accuracy is
    # reported per type, as recall is per kind.
    type: str | None = None

    @model_validator(mode="after")
    def _abstaining_expects_no_answer(self) -> QuerySpec:
        # An abstaining answer has no lead, so these checks could never pass together.
        if self.expect_abstain:
            clashing = [name for name in ("expect_answer", "expect_answer_mentions") if getattr(self, name)]
            if self.expect_status == "grounded":
                clashing.append('expect_status "grounded"')
            if clashing:
                raise ValueError(f"expect_abstain contradicts {', '.join(clashing)}")
        return self

    @property
    def checks_answer(self) -> bool:
        return bool(
            self.expect_status
            or self.expect_answer_mentions
            or self.expect_answer_excludes
            or self.expect_answer
            or self.expect_abstain
        )

    def as_caller(self) -> Caller:
        spec = self.caller or CallerSpec()
        return Caller(tags=spec.tags, region=spec.region, as_of=spec.as_of or dt.date.today())

    @property
    def kind_name(self) -> str:
        return self.kind or "unlabelled"

    @property
    def type_name(self) -> str:
        return self.type or self.kind_name


_QUERY_LIST: TypeAdapter[list[QuerySpec]] = TypeAdapter(list[QuerySpec])


def load_queries(path: Path) -> list[QuerySpec]:
    """Raises ConfigError with file and line for unreadable JSON, bad fields and duplicate ids."""
    data = read_json(path)
    locator = Locator(path.read_text(encoding="utf-8"))
    try:
        queries = _QUERY_LIST.validate_python(data)
    except ValidationError as exc:
        raise ConfigError(
            [_diagnostic(path, locator, tuple(err["loc"]), _error_text(err)) for err in exc.errors()]
        ) from None
    duplicates = _duplicate_ids(path, locator, queries)
    if duplicates:
        raise ConfigError(duplicates)
    return queries


def stale_labels(path: Path, queries: Sequence[QuerySpec], known_ids: Collection[str]) -> list[Diagnostic]:
    """Labelled ids (expect_evidence, must_not_appear) that name no unit of the KB: after an edit
    renamed a unit, their checks would pass or fail for the wrong reason."""
    text = path.read_text(encoding="utf-8")
    spans = _element_spans(text)
    locator = Locator(text)
    # Ids compare in any case, as eval's labels and gates do.
    known = {uid.casefold() for uid in known_ids}
    in_order = sorted(known_ids)
    problems: list[Diagnostic] = []
    for index, query in enumerate(queries):
        start, end = spans[index]
        for field in ("expect_evidence", "must_not_appear"):
            for unit_id in getattr(query, field):
                if unit_id.casefold() in known:
                    continue
                found = text.find(json.dumps(unit_id), start, end)
                offset = found if found >= 0 else start
                line, col = locator.line_col(offset)
                problems.append(
                    Diagnostic(
                        code=Code.UNKNOWN_LABELLED_ID,
                        file=str(path),
                        line=line,
                        col=col,
                        message=f"query {query.id}: {field} names {unit_id!r}, which is not a unit of the KB"
                        + _suggestion(unit_id, in_order, len(problems)),
                    )
                )
    return problems


# A suggestion compares ~2,000 ids (~0.16 s): a labels file that an edit left wholly stale gets
# one for its first ids only, so `check --against` stays seconds long.
_MAX_SUGGESTIONS = 50


def _suggestion(unit_id: str, in_order: Sequence[str], earlier: int) -> str:
    if earlier >= _MAX_SUGGESTIONS:
        return f"; no suggestion past the first {_MAX_SUGGESTIONS} unknown ids"
    return did_you_mean_id(unit_id, in_order)


def _duplicate_ids(path: Path, locator: Locator, queries: Sequence[QuerySpec]) -> list[Diagnostic]:
    first: dict[str, int] = {}
    problems = []
    for index, query in enumerate(queries):
        if query.id in first:
            where = locator.position((first[query.id], "id"))[0]
            message = f"duplicate query id {query.id!r} (first on line {where})"
            problems.append(_diagnostic(path, locator, (index, "id"), message))
        first.setdefault(query.id, index)
    return problems


def _error_text(err: ErrorDetails) -> str:
    text = f"{_loc_text(err['loc'])}: {err['msg']}"
    if err["type"] == "extra_forbidden" and err["loc"]:
        text += did_you_mean(str(err["loc"][-1]), field_names(QuerySpec))
    return text


def _loc_text(loc: Sequence[str | int]) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc).lstrip(".") or "<root>"


def _diagnostic(path: Path, locator: Locator, loc: tuple[str | int, ...], message: str) -> Diagnostic:
    line, col = locator.position(loc)
    return Diagnostic(code=Code.INVALID_CONFIG, message=message, file=str(path), line=line, col=col)


def _element_spans(text: str) -> list[tuple[int, int]]:
    """Start and end offsets of each element of the top-level array (the text is valid JSON)."""
    decoder = json.JSONDecoder()
    spans: list[tuple[int, int]] = []
    position = text.index("[") + 1
    while True:
        while text[position] in " \t\r\n,":
            position += 1
        if text[position] == "]":
            return spans
        _, end = decoder.raw_decode(text, position)
        spans.append((position, end))
        position = end
