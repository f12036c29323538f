"""Where a validation path (pydantic's error `loc`) points in a JSON text, as line and column.

Walks the text along the path: an index selects an array element, a name an object member (the
position of its key, so an error names the line the field is written on). A part that is not
there (a missing field) leaves the position at its parent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence

_SPACE = re.compile(r"[ \t\r\n]*")
_DECODER = json.JSONDecoder()


def position(text: str, loc: Sequence[str | int]) -> tuple[int, int]:
    """1-based line and column of `loc` in `text`, which must be valid JSON."""
    offset = _offset(text, loc)
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


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
