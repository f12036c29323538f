"""JSON Lines documents (docs/formats.md): where a bad key is reported."""

from __future__ import annotations

from core.cnl import read_text
from core.infra.diagnostics import Code


def test_an_unknown_or_repeated_key_is_reported_at_its_column() -> None:
    text = (
        '{"_id": "b1", "title": "Heat", "txet": "Rail expands in heat."}\n'
        '{"_id": "b2", "title": "Cold", "effective_to": "2026-01-01", "effectiveTo": "2026-02-01", "text": "x"}\n'
    )
    units, diagnostics = read_text(text, "bulletins.jsonl")
    assert units == []
    assert [(d.code, d.line, d.col, d.message) for d in diagnostics] == [
        (Code.UNKNOWN_FIELD, 1, 32, "unknown key 'txet'; did you mean 'text'?; the document is not read"),
        (Code.UNKNOWN_FIELD, 2, 62, "key 'effectiveTo' repeats 'effective_to' (keys are case-insensitive)"),
    ]
