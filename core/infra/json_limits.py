"""Limits on what untrusted JSON and text input may be before it is parsed: nesting depth (the
standard `json` parser recurses once per `[` or `{`, so 200,000 of them raise RecursionError),
and UTF-8 (a file of random bytes is a clear error with its line, not a UnicodeDecodeError).
What the parser would accept silently or explain in its own terms is refused with a position too:
a key written twice in one object (`json` keeps the last value, so a second `"caller"` or
`"maxDepth"` would quietly win) and a number past the interpreter's digit limit.

Both checks are cheap on ordinary input: the depth check counts brackets in C and looks closer
only at a text holding more than the limit of them; the UTF-8 check is the decode itself.
"""

from __future__ import annotations

import json
import re
import sys
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class JsonLimits(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    # Deeper than any KB document, query or config file needs (they nest 3–5 levels), and below
    # the interpreter's recursion limit (1,000), which the standard parser would otherwise reach.
    max_depth: int = Field(default=100, ge=2, le=900)


MAX_JSON_DEPTH = JsonLimits().max_depth
# A JSON string, so that brackets inside one do not count.
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_CHUNK = 1 << 20


@cache
def _steps():
    """Each byte's change of nesting depth. numpy only here: config readers import this module."""
    import numpy as np

    steps = np.zeros(256, dtype=np.int8)
    steps[[ord("["), ord("{")]] = 1
    steps[[ord("]"), ord("}")]] = -1
    return np, steps


class TooDeep(ValueError):
    """JSON nested deeper than the limit; `col` (1-based) is where the limit was passed."""

    def __init__(self, limit: int, col: int):
        super().__init__(f"JSON nested deeper than {limit} levels")
        self.limit, self.col = limit, col


def check_depth(text: str, limit: int = MAX_JSON_DEPTH) -> None:
    """Raise `TooDeep` when `text` (one JSON value, or one JSONL line) nests deeper than `limit`.

    Only a text with more than `limit` opening brackets is scanned: the others cannot be that deep.
    Unbalanced or unterminated input is counted as written, which at worst calls a text that is not
    JSON anyway too deep.
    """
    if text.count("[") + text.count("{") <= limit:
        return
    # Strings are blanked to equal-length runs, so offsets stay the text's own; a chunk at a time
    # keeps the scan's arrays small whatever the text's size.
    data = _STRING.sub(lambda match: " " * len(match.group()), text).encode("utf-8", "surrogatepass")
    np, steps_of = _steps()
    depth = 0
    for start in range(0, len(data), _CHUNK):
        steps = steps_of[np.frombuffer(data, dtype=np.uint8, count=min(_CHUNK, len(data) - start), offset=start)]
        levels = depth + np.cumsum(steps, dtype=np.int64)
        over = np.flatnonzero(levels > limit)
        if len(over):
            at = start + int(over[0])
            raise TooDeep(limit, len(data[:at].decode("utf-8", "surrogatepass")) + 1)
        depth = int(levels[-1])


class NotUtf8(ValueError):
    """Bytes that are not UTF-8: `line` and `col` (1-based; col counts bytes) of the first bad one."""

    def __init__(self, line: int, col: int, byte: int, why: str | None = None):
        super().__init__(why or f"byte 0x{byte:02x} at line {line}, column {col} is not valid UTF-8")
        self.line, self.col = line, col


# Byte-order marks of the encodings editors save "Unicode" text in besides UTF-8 (UTF-32 first:
# its little-endian mark starts with UTF-16's).
_BOMS = {
    b"\xff\xfe\x00\x00": "UTF-32",
    b"\x00\x00\xfe\xff": "UTF-32",
    b"\xff\xfe": "UTF-16",
    b"\xfe\xff": "UTF-16",
}


def other_encoding(data: bytes) -> str | None:
    """What to say about text saved as UTF-16 or UTF-32 (it starts with their byte-order mark)."""
    for bom, name in _BOMS.items():
        if data.startswith(bom):
            return f"the file is {name} text (it starts with a byte-order mark); mrptui reads UTF-8: save it as UTF-8"
    return None


def decode_utf8(data: bytes) -> str:
    """`data` as text (a leading BOM dropped), or `NotUtf8` naming the first bad byte's line."""
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise NotUtf8(line, col, data[exc.start], other_encoding(data)) from None


class DuplicateKey(ValueError):
    """A key written twice in one JSON object."""

    def __init__(self, key: str):
        super().__init__(f"key {key!r} is written twice in one object; write it once")
        self.key = key


def unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`object_pairs_hook` that refuses a repeated key (`DuplicateKey`)."""
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise DuplicateKey(key)
        seen.add(key)
    return dict(pairs)


# A string, or one of the characters that open, close or separate JSON's containers.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}:]', re.DOTALL)


def duplicate_key_offset(text: str, key: str) -> int:
    """0-based offset of `key`'s first second writing in one object (0 when none): the parser's
    hook cannot say where, so the text is walked once more, on this error path only."""
    objects: list[set[str] | None] = []  # one entry per open container; None for a list
    pending: tuple[str, int] | None = None  # the last string, which is a key if `:` follows
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token == ":" and pending is not None and objects and objects[-1] is not None:
            written, offset = pending
            if written == key and written in objects[-1]:
                return offset
            objects[-1].add(written)
        elif token in "[{":
            objects.append(set() if token == "{" else None)
        elif token in "]}" and objects:
            objects.pop()
        pending = (json.loads(token), match.start()) if token.startswith('"') else None
    return 0


def long_number(text: str) -> tuple[str, int] | None:
    """What to say about the first integer over the interpreter's digit limit (json raises for it
    without a position), and its 0-based offset; None when there is none."""
    limit = sys.get_int_max_str_digits()
    if not limit:
        return None
    blanked = _STRING.sub(lambda match: " " * len(match.group()), text)
    found = re.search(rf"\d{{{limit + 1},}}", blanked)
    if found is None:
        return None
    return f"a number of {len(found.group()):,} digits; at most {limit:,} are read", found.start()
