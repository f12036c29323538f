"""Permission fields as an author writes them: an empty one fails closed, and a tag no caller can
hold is named (issue 14: a failed or careless edit must never make a unit more visible)."""

from __future__ import annotations

import pytest

from core.cnl.markdown import read_markdown
from core.infra.diagnostics import Code, Severity

UNIT = """## Context Unit ward::chunk-000::unit-000
Role: Definition
Topic: ICU door
Claim: The ICU door code is 8812.
{extra}
"""


@pytest.mark.parametrize("field", ["Acl:", "Region:", "EffectiveFrom:", "EffectiveTo:", "Acl: ,"])
def test_an_empty_permission_field_skips_the_unit_with_an_error(field: str) -> None:
    units, problems = read_markdown(UNIT.format(extra=field), "ward.md")
    assert units == []
    assert [(p.code, p.line, p.severity) for p in problems] == [(Code.MISSING_REQUIRED_FIELD, 5, Severity.ERROR)]
    assert "empty" in problems[0].message


@pytest.mark.parametrize(
    ("field", "what"),
    [
        ("Acl: staff:icu, night\u200bshift", "U+200B"),
        ("Acl: ｓtaff:icu", "NFKC"),
        ("Region: E|U", "separator"),
    ],
)
def test_a_tag_no_caller_can_hold_loads_restricted_and_is_named(field: str, what: str) -> None:
    units, problems = read_markdown(UNIT.format(extra=field), "ward.md")
    assert len(units) == 1 and (units[0].acl or units[0].region)
    (problem,) = problems
    assert problem.severity is Severity.WARNING and problem.line == 5 and what in problem.message
    assert "no caller can hold it" in problem.message
