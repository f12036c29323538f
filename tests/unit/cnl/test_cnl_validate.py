"""Every unit validation code, with the exact line and column it points at."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.cnl import read_markdown
from core.infra.diagnostics import Code, Severity
from core.units import Relation, Role

HEADER = "## Context Unit src::chunk-000::unit-000"
BASE = ("Role: Explanation", "Topic: T", "Claim: C")

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures" / "cnl"


def md(*fields: str) -> str:
    return "\n".join((HEADER, *fields)) + "\n"


def problems(text: str) -> list[tuple[Code, int, int]]:
    units, diagnostics = read_markdown(text, "kb.md")
    assert units == [], "a unit with an error must be skipped"
    return [(d.code, d.line, d.col) for d in diagnostics]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A field that is not there is reported at the unit's id in its heading.
        (md("Topic: T", "Claim: C"), (Code.MISSING_REQUIRED_FIELD, 1, 17)),
        (md("Role: Explanation", "Topic:", "Claim: C"), (Code.MISSING_REQUIRED_FIELD, 3, 1)),
        (md("Role: Explanation", "Topic: T"), (Code.MISSING_REQUIRED_FIELD, 1, 17)),
        (md("Role: Wizard", "Topic: T", "Claim: C"), (Code.INVALID_ROLE_VALUE, 2, 7)),
        (md(*BASE, "UtilityActs: explain, juggle"), (Code.INVALID_ACT_VALUE, 5, 23)),
        (md(*BASE, "Subject: A", "Relation: owns", "Object: B"), (Code.INVALID_RELATION_VALUE, 6, 11)),
        (md(*BASE, "Subject: A", "Object: B"), (Code.INCOMPLETE_SYMBOLIC_FACT, 5, 1)),
        (
            md(*BASE, "Subject: A", "Relation: uses", "Object: B", "Confidence: high"),
            (Code.INVALID_CONFIDENCE_VALUE, 8, 13),
        ),
        (
            md(*BASE, "Subject: A", "Relation: uses", "Object: B", "Confidence: 1.5"),
            (Code.INVALID_CONFIDENCE_VALUE, 8, 13),
        ),
        (md(*BASE, "Procedure: step one"), (Code.CLAIM_AND_PROCEDURE_CONFLICT, 5, 1)),
        (md("Role: Procedure", "Topic: T", "Claim: C"), (Code.PROCEDURE_ROLE_MISMATCH, 2, 7)),
        (md("Role: Explanation", "Topic: T", "Procedure: step"), (Code.PROCEDURE_ROLE_MISMATCH, 2, 7)),
        (md(*BASE, "Colour: red"), (Code.UNKNOWN_FIELD, 5, 1)),
        (md(*BASE, "Topic: again"), (Code.DUPLICATE_FIELD, 5, 1)),
        (md(*BASE, "EffectiveFrom: 2026-13-01"), (Code.INVALID_DATE_VALUE, 5, 16)),
        (md(*BASE, "EffectiveTo: soon"), (Code.INVALID_DATE_VALUE, 5, 14)),
        (md(*BASE, "this line has no colon"), (Code.MALFORMED_LINE, 5, 1)),
    ],
)
def test_each_code_points_at_the_field(text: str, expected: tuple[Code, int, int]) -> None:
    assert problems(text) == [expected]


def test_heading_without_id_is_malformed() -> None:
    units, diagnostics = read_markdown("## Context Unit\nRole: Explanation\n", "kb.md")
    assert units == []
    assert [(d.code, d.line, d.col) for d in diagnostics] == [(Code.MALFORMED_LINE, 1, 1)]


def test_all_problems_of_one_unit_are_reported_together() -> None:
    text = md("Role: Wizard", "Topic: T", "Claim: C", "Procedure: p", "Subject: A")
    assert {code for code, _, _ in problems(text)} == {
        Code.INVALID_ROLE_VALUE,
        Code.CLAIM_AND_PROCEDURE_CONFLICT,
        Code.INCOMPLETE_SYMBOLIC_FACT,
    }


def test_id_outside_the_schema_is_a_warning_and_the_unit_loads() -> None:
    units, diagnostics = read_markdown("## Context Unit my-unit\nRole: Explanation\nTopic: T\nClaim: C\n", "kb.md")
    assert [u.id for u in units] == ["my-unit"]
    assert [(d.code, d.line, d.col, d.severity) for d in diagnostics] == [
        (Code.INVALID_ID_FORMAT, 1, 17, Severity.WARNING)
    ]
    assert units[0].source_id == "my-unit" and units[0].chunk_id == "my-unit"


def test_source_and_chunk_ids_are_derived_from_the_id() -> None:
    units, _ = read_markdown(md(*BASE), "kb.md")
    assert (units[0].source_id, units[0].chunk_id) == ("src", "src::chunk-000")


def test_spellings_are_normalised_to_canonical_values() -> None:
    units, diagnostics = read_markdown(
        md(
            "Role: eXplanation",
            "Topic: T",
            "Claim: C",
            "Subject: A",
            "Relation: Depends On",
            "Object: B",
            "UtilityActs: Explain",
        ),
        "kb.md",
    )
    assert diagnostics == []
    assert units[0].role is Role.EXPLANATION
    assert units[0].relation is Relation.DEPENDS_ON
    assert units[0].utility_acts == ("explain",)


def test_contradictory_dates_warn_but_load() -> None:
    units, diagnostics = read_markdown(md(*BASE, "EffectiveFrom: 2026-05-01", "EffectiveTo: 2026-04-01"), "kb.md")
    assert len(units) == 1
    assert [(d.code, d.line, d.col, d.severity) for d in diagnostics] == [
        (Code.INVALID_DATE_VALUE, 6, 14, Severity.WARNING)
    ]


def test_a_broken_unit_does_not_stop_the_others() -> None:
    units, diagnostics = read_markdown((FIXTURES / "broken.md").read_text(), "broken.md")
    assert [u.id for u in units] == ["broken::chunk-000::unit-000", "broken::chunk-000::unit-002"]
    assert [(d.code, d.line, d.col) for d in diagnostics] == [(Code.INVALID_ROLE_VALUE, 7, 7)]
