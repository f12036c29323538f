from __future__ import annotations

import datetime as dt
from pathlib import Path

from core.cnl import read_markdown, read_text, to_markdown
from core.units import Act, Relation, Role

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures" / "cnl"


def semantic(units):
    """Units without where they were read from, for comparing across formats."""
    return [unit.model_dump(exclude={"location"}) for unit in units]


def test_reads_every_field_with_continuations() -> None:
    units, diagnostics = read_markdown((FIXTURES / "units.md").read_text(), "units.md")
    assert diagnostics == []
    first, procedure, restricted = units
    assert first.claim == "AchillesIDE uses Ploinky for its sandboxed runs."
    assert (first.subject, first.relation, first.object, first.confidence) == (
        "AchillesIDE",
        Relation.USES,
        "Ploinky",
        0.95,
    )
    assert first.utility_acts == (Act.EXPLAIN, Act.DESCRIBE)
    assert first.role is Role.EXPLANATION
    assert procedure.procedure == "Stop the writers.\nRotate the key with orionctl.\n- Start the writers again."
    assert (procedure.condition, procedure.phase_scopes, procedure.title) == (
        "only during a maintenance window",
        ("operate", "maintain"),
        "Key rotation",
    )
    assert restricted.acl == ("support:eu", "legal")
    assert restricted.region == "EU"
    assert (restricted.effective_from, restricted.effective_to) == (dt.date(2026, 4, 1), dt.date(2026, 12, 31))
    assert restricted.utility_note == "answers data residency questions"


def test_every_unit_knows_its_file_and_heading_line() -> None:
    units, _ = read_markdown((FIXTURES / "units.md").read_text(), "units.md")
    assert [(u.location.file, u.location.line) for u in units] == [("units.md", 6), ("units.md", 17), ("units.md", 33)]


def test_text_outside_units_is_ignored() -> None:
    text = "# Title\n\nSome prose: with a colon.\n\n## Notes\nNot a unit either.\n"
    assert read_markdown(text, "kb.md") == ([], [])


def test_round_trip_through_to_markdown() -> None:
    units, _ = read_markdown((FIXTURES / "units.md").read_text(), "units.md")
    written = to_markdown(units)
    again, diagnostics = read_text(written, "again.md")
    assert diagnostics == []
    assert semantic(again) == semantic(units)


def test_sop_units_round_trip_through_markdown() -> None:
    units, _ = read_text((FIXTURES / "units.cnl").read_text(), "units.cnl")
    # Markdown folds a claim's line breaks into spaces; everything else survives unchanged.
    expected = [u.model_copy(update={"claim": " ".join(u.claim.split())}) for u in units]
    again, diagnostics = read_text(to_markdown(units), "units.md")
    # Only the fixture's 'legal team' tag, which no caller can hold, is named (as in the SOP file).
    assert [d.severity.value for d in diagnostics] == ["warning"] and "'legal team'" in diagnostics[0].message
    assert semantic(again) == semantic(expected)


def test_a_line_that_is_no_field_says_what_it_most_likely_meant() -> None:
    text = (
        "## Context Unit drain::chunk-000::unit-000\n"
        "Role: Explanation\n"
        "Topic Drainage checks\n"
        "Claim: Blocked cesses cause wet beds.\n"
        "Wet beds lead to track faults.\n"
    )
    _, diagnostics = read_text(text, "drain.md")
    messages = {d.line: d.message for d in diagnostics if d.code.value == "MALFORMED_LINE"}
    assert messages == {
        3: "expected 'Field: value'; did you mean 'Topic: Drainage checks'?",
        5: "expected 'Field: value'; indent it to continue the field above",
    }
