"""Every key of a JSON document is a label position (docs/security.md, "Readers fail closed").

`loads_unique` refuses a document that writes one key twice in an object, exactly or in another
case: `json.loads` keeps the last value silently, so `"effectiveFrom": "2027-01-01",
"effectiveFrom": "2020-01-01"` would serve a unit not yet in effect. `permission_keys` finds
permission labels at any depth, as object keys and as list-of-pairs names (`[["acl", "staff"]]`),
and `raw_permission_key` finds one in a line that is not JSON at all, so that its errors are
counted for the author only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from core.cnl.permission_inline import permission_inline
from core.cnl.permission_names import permission_label
from core.cnl.permissions import permission_line
from core.infra.json_limits import TooDeep, check_depth


class DuplicateKey(ValueError):
    """An object writes one key twice (exactly or case-folded)."""


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, str] = {}
    for key, _ in pairs:
        folded = key.casefold()
        if folded in seen:
            same = "" if seen[folded] == key else f" (as {seen[folded]!r}; keys are case-insensitive)"
            raise DuplicateKey(f"key {key!r} is written twice in one object{same}; the document is not read")
        seen[folded] = key
    return dict(pairs)


def loads_unique(text: str) -> Any:
    """`json.loads`, raising DuplicateKey for a key written twice in one object."""
    return json.loads(text, object_pairs_hook=_unique_pairs)


_URL = re.compile(r"[a-z][a-z0-9+.\-]*://[^\s]*", re.IGNORECASE)
# A mapping written as an object per pair (`{"key": "acl", "value": "staff"}`).
_PAIR_NAMES = ("key", "name", "field", "attribute", "property")


def permission_keys(value: Any, path: str = "", *, strings: bool = False) -> Iterator[tuple[str, str, str]]:
    """(path, key as written, field) of each permission label inside `value`, at any depth: an
    object's key, a pair's name (`[["acl", "staff"]]`, `{"key": "acl", …}`), a key inside a string
    that is itself JSON text (`"{\"acl\": \"staff\"}"`), and with `strings` (a value nobody
    reads, such as `metadata`) a string that is a label line (`"acl: staff"`)."""
    if isinstance(value, dict):
        for key, inner in value.items():
            where = f"{path}.{key}" if path else str(key)
            label = permission_label(key) if isinstance(key, str) else None
            if label is None and isinstance(key, str) and key.casefold() in _PAIR_NAMES and isinstance(inner, str):
                label = permission_label(inner)
                key = inner
            if label is not None:
                yield where, key, label
            yield from permission_keys(inner, where, strings=strings)
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            where = f"{path}[{index}]"
            # A list of pairs is a mapping written as lists (`[["acl", "staff"]]`).
            pair = isinstance(inner, list) and len(inner) == 2 and isinstance(inner[0], str)
            label = permission_label(inner[0]) if pair else None
            if label is not None:
                yield where, inner[0], label
            yield from permission_keys(inner, where, strings=strings)
    elif isinstance(value, str):
        yield from _string_labels(value, path, strings)


def _string_labels(text: str, path: str, strings: bool) -> Iterator[tuple[str, str, str]]:
    if text.lstrip().startswith(("{", "[")):
        try:
            check_depth(text)
            inner = json.loads(text)
        except (ValueError, TooDeep):
            inner = None
        if isinstance(inner, (dict, list)):
            yield from permission_keys(inner, f"{path}(JSON text)", strings=strings)
            return
    if not strings or _URL.fullmatch(text):
        return  # a URL (BEIR's `metadata.url`) is a value, never a label
    found = permission_line(text) or permission_inline(text)
    if found is not None:
        yield path, found.name, found.label


# A JSON string followed by `:` (a key), in a line that may not parse.
_RAW_KEY = re.compile(r'"((?:[^"\\]|\\.){1,80})"\s*:')


def raw_permission_key(line: str) -> bool:
    """Whether a line, JSON or not, writes a key that is a permission label."""
    if ":" not in line:  # no key without its colon; the pattern's scan from every quote is not free
        return False
    return any(permission_label(match.group(1)) for match in _RAW_KEY.finditer(line))
