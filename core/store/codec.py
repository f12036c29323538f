"""Units to and from a segment's `units.json`, fast enough for a 1M-unit KB.

Writing goes through pydantic (validated models, `exclude_defaults`). Reading does not validate
again: a segment's bytes are checksummed and its key covers the source of `core/units.py`, so
they are exactly what a validated model dumped. Re-validating costs ~60 µs a unit (the shape
validator runs in Python), 6 s at 100k; restoring the fields directly costs a few µs.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Sequence

from pydantic import TypeAdapter

from core.units import Act, KnowledgeUnit, Relation, Role, SourceLocation

_DUMP = TypeAdapter(list[KnowledgeUnit])
_FIELDS = tuple(KnowledgeUnit.model_fields)
_DEFAULTS = {name: field.get_default() for name, field in KnowledgeUnit.model_fields.items() if not field.is_required()}
_ABSENT = object()


def _make(cls: type, values: dict, fields_set: set[str]):
    """What pydantic's model_construct sets, without its per-field Python work."""
    model = object.__new__(cls)
    object.__setattr__(model, "__dict__", values)
    object.__setattr__(model, "__pydantic_fields_set__", fields_set)
    object.__setattr__(model, "__pydantic_extra__", None)
    object.__setattr__(model, "__pydantic_private__", None)
    return model


def _location(raw: dict) -> SourceLocation:
    return _make(SourceLocation, {"file": raw["file"], "line": raw.get("line", 1), "col": raw.get("col", 1)}, set(raw))


# Fields whose JSON form is not already their Python value.
_CONVERT: dict[str, Callable] = {
    "role": Role,
    "utility_acts": lambda items: tuple(map(Act, items)),
    "phase_scopes": tuple,
    "relation": Relation,
    "acl": tuple,
    "effective_from": dt.date.fromisoformat,
    "effective_to": dt.date.fromisoformat,
    "location": _location,
}


def dump_units(units: Sequence[KnowledgeUnit]) -> bytes:
    """Columns, one per field (None when every unit has the default), plus each unit's set fields."""
    rows = [unit.model_dump(mode="json") for unit in units]
    columns = {}
    for name in _FIELDS:
        column = [row[name] for row in rows]
        default = _DEFAULTS.get(name, _ABSENT)
        columns[name] = None if default is not _ABSENT and all(v == _json_default(name) for v in column) else column
    masks = [sum(1 << i for i, name in enumerate(_FIELDS) if name in unit.model_fields_set) for unit in units]
    return json.dumps({"fields": _FIELDS, "count": len(units), "columns": columns, "set": masks}).encode()


def load_units(data: bytes) -> tuple[KnowledgeUnit, ...]:
    """Units from `dump_units` output; raises ValueError/KeyError/TypeError on foreign data."""
    stored = json.loads(data)
    if tuple(stored["fields"]) != _FIELDS:
        raise ValueError("unit fields differ from this version's")
    count = stored["count"]
    columns = [_column(name, stored["columns"][name], count) for name in _FIELDS]
    masks = stored["set"]
    if len(masks) != count:
        raise ValueError("column lengths differ")
    sets: dict[int, set[str]] = {}
    units = []
    for values, mask in zip(zip(*columns), masks):
        fields_set = sets.get(mask)
        if fields_set is None:
            fields_set = sets[mask] = {name for i, name in enumerate(_FIELDS) if mask >> i & 1}
        # Units are frozen, so one set object per distinct mask is safe to share.
        units.append(_make(KnowledgeUnit, dict(zip(_FIELDS, values)), fields_set))
    return tuple(units)


def _json_default(name: str):
    default = _DEFAULTS[name]
    return list(default) if isinstance(default, tuple) else default


def _column(name: str, values: list | None, count: int) -> Sequence:
    if values is None:
        return [_DEFAULTS[name]] * count
    if len(values) != count:
        raise ValueError(f"column {name} has {len(values)} values, expected {count}")
    convert = _CONVERT.get(name)
    if convert is None:
        return values
    if name == "location":
        return [_location(v) if v is not None else None for v in values]
    # Few distinct values per column (roles, act lists, dates): convert each once.
    memo: dict = {}
    out = []
    for value in values:
        key = tuple(value) if isinstance(value, list) else value
        converted = memo.get(key, _ABSENT)
        if converted is _ABSENT:
            converted = memo[key] = convert(value) if value is not None else None
        out.append(converted)
    return out
