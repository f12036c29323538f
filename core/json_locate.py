"""Where a validation path (pydantic's error `loc`) points in a JSON text, as line and column;
and JSONL lines validated one by one, each problem at its line.

Walks the text along the path: an index selects an array element, a name an object member (the
position of its key, so an error names the line the field is written on). A part that is not
there (a missing field) leaves the position at its parent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from core.diagnostics import Code, Diagnostic

_SPACE = re.compile(r"[ \t\r\n]*")
_DECODER = json.JSONDecoder()
Model = TypeVar("Model", bound=BaseModel)


def position(text: str, loc: Sequence[str | int]) -> tuple[int, int]:
    """1-based line and column of `loc` in `text`, which must be valid JSON."""
    offset = _offset(text, loc)
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def value_column(line: str, name: str) -> int | None:
    """1-based column where the value of the top-level member `name` of a one-line JSON object
    starts (its opening quote for a string), or None when there is no such member."""
    return next((at + 1 for key, _, at in _members(line, _skip(line, 0)) if key == name), None)


def _offset(text: str, loc: Sequence[str | int]) -> int:
    point = value = _skip(text, 0)
    for part in loc:
        found = next(((p, v) for name, p, v in _members(text, value) if name == part), None)
        if found is None:
            break
        point, value = found
    return point


def _members(text: str, start: int) -> Iterator[tuple[str | int, int, int]]:
    """(name or index, where it is written, where its value starts) of each member of the array
    or object at `start`; nothing for a scalar."""
    opener = text[start:start + 1]
    if opener not in ("[", "{"):
        return
    at = _skip(text, start + 1)
    index = 0
    while at < len(text) and text[at] not in "]}":
        point = at
        name: str | int = index
        if opener == "{":
            name, at = _DECODER.raw_decode(text, at)
            at = _skip(text, _skip(text, at) + 1)  # past the ":"
        yield name, point, at
        _, at = _DECODER.raw_decode(text, at)
        at = _skip(text, at)
        if text[at:at + 1] == ",":
            at = _skip(text, at + 1)
        index += 1


def _skip(text: str, at: int) -> int:
    return _SPACE.match(text, at).end()


def jsonl_records(text: str, model: type[Model], file: str) -> Iterator[tuple[int, Model | Diagnostic]]:
    """Each non-blank line of a JSONL text validated as `model`: (line number, record), or (line
    number, a MALFORMED_LINE diagnostic naming the bad fields) for a line that does not validate."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, model.model_validate_json(line)
        except ValidationError as exc:
            message = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'line'}: {e['msg']}" for e in exc.errors())
            yield number, Diagnostic(code=Code.MALFORMED_LINE, message=message, file=file, line=number)
