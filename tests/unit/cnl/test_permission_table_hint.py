"""A two-column table whose first cell is a permission field's name is read as that field and its
value, and withdrawn (fail closed, docs/security.md): its error tells the author both readings
apart, in every reader a table reaches, and a line that is no such row keeps the usual hint."""

from __future__ import annotations

import pytest

from core.cnl import read_text
from core.infra.diagnostics import Code

HINT = "a two-column table headed by a field's name reads as that field and its value"
COLUMNS = "if the row names columns, add a third column or name the first one otherwise"
TABLE = "| Region | Population |\n|---|---|\n| Finland | 5.5 |\n| Sweden | 10.4 |\n"


def _messages(text: str, file: str) -> list[str]:
    _, diagnostics = read_text(text, file)
    return [d.message for d in diagnostics if d.code is Code.PERMISSION_NOT_READ]


@pytest.mark.parametrize(
    ("text", "file"),
    [
        (f"Population by region.\n\n{TABLE}", "notes.txt"),
        (
            "## Context Unit census::chunk-000::unit-000\nRole: Definition\nTopic: Census\n"
            "Claim: Population in millions:\n" + "".join(f"  {row}\n" for row in TABLE.splitlines()),
            "kb.md",
        ),
        ("Population by region.\n\nRegion\tPopulation\nFinland\t5.5\nSweden\t10.4\n", "notes.txt"),
    ],
    ids=["plain text", "a unit's continuation lines", "tab-separated"],
)
def test_a_two_column_table_headed_by_a_field_name_says_how_to_keep_it_public(text: str, file: str) -> None:
    messages = _messages(text, file)
    assert len(messages) == 1
    assert HINT in messages[0] and COLUMNS in messages[0]
    assert "if it restricts the unit, write it as the unit's Region field" in messages[0]


def test_a_label_line_that_is_no_table_row_keeps_the_usual_hint() -> None:
    messages = _messages("The vault combination is 4471.\nRegion: EU\n", "notes.txt")
    assert len(messages) == 1
    assert HINT not in messages[0] and "write it as the unit's Region field" in messages[0]
