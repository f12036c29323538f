"""Where a validation path (pydantic's error `loc`) points in a JSON text, as line and column;
and JSONL lines validated one by one, each problem at its line.

Walks the text along the path: an index selects an array element, a name an object member (the
position of its key, so an error names the line the field is written on). A part that is not
there (a missing field) leaves the position at its parent.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterator, Sequence
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from core.infra.diagnostics import Code, Diagnostic

_SPACE = re.compile(r"[ \t\r\n]*")
_NEWLINE = re.compile("\n")
_DECODER = json.JSONDecoder()
Model = TypeVar("Model", bound=BaseModel)


def position(text: str, loc: Sequence[str | int]) -> tuple[int, int]:
    """1-based line and column of `loc` in `text`, which must be valid JSON."""
    return Locator(text).position(loc)


class Locator:
    """`position` for many paths of one JSON text in time linear in the text (a queries file with
    10,000 bad entries took minutes): the top-level members are walked once, and a line number
    is a bisection over the text's line starts."""

    def __init__(self, text: str):
        self._text = text
        self._root = _skip(text, 0)
        self._top: dict[str | int, tuple[int, int]] | None = None
        self._lines: list[int] | None = None

    def position(self, loc: Sequence[str | int]) -> tuple[int, int]:
        """1-based line and column of `loc`, as `position` gives them."""
        return self.line_col(self._offset(loc))

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and column of the text's `offset`."""
        if self._lines is None:
            self._lines = [0, *(match.end() for match in _NEWLINE.finditer(self._text))]
        line = bisect.bisect_right(self._lines, offset)
        return line, offset - self._lines[line - 1] + 1

    def _offset(self, loc: Sequence[str | int]) -> int:
        if not loc:
            return self._root
        if self._top is None:
            self._top = {}
            for name, point, value in _members(self._text, self._root):
                self._top.setdefault(name, (point, value))
        found = self._top.get(loc[0])
        return self._root if found is None else _offset(self._text, loc[1:], *found)


def value_column(line: str, name: str) -> int | None:
    """1-based column where the value of the top-level member `name` of a one-line JSON object
    starts (its opening quote for a string), or None when there is no such member."""
    return next((at + 1 for key, _, at in _members(line, _skip(line, 0)) if key == name), None)


def _offset(text: str, loc: Sequence[str | int], point: int | None = None, value: int | None = None) -> int:
    """Where `loc` is written, walking from the value at `value` (written at `point`; default the root)."""
    if point is None or value is None:
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
    opener = text[start : start + 1]
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
        if text[at : at + 1] == ",":
            at = _skip(text, at + 1)
        index += 1


def _skip(text: str, at: int) -> int:
    space = _SPACE.match(text, at)
    assert space is not None  # `*` matches the empty string
    return space.end()


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
