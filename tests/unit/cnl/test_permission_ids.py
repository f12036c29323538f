"""A unit id of the schema `<source>::chunk-NNN::unit-NNN` (docs/formats.md) names a source: its
`::` is the id's own and separates no label, so a source called "regions" or "access-policy" is
public in every reader, while a label written around or instead of such an id still withdraws."""

from __future__ import annotations

import json

import pytest

from core.cnl import read_text
from core.infra.diagnostics import PERMISSION_CODES
from tests.support.permission_cases import SECRET, withdrawn

SOURCES = ["regions", "region", "access", "access-policy", "groups", "tags", "audience", "valid", "expiry-dates"]


def _md(unit_id: str, chunk_id: str | None = None) -> tuple[str, str]:
    chunk = f"ChunkId: {chunk_id}\n" if chunk_id else ""
    # The continuation lines take the line reader, which reads the heading as text.
    claim = f"Claim: {SECRET}\n  It opens at dawn.\n  It closes at dusk.\n"
    return f"## Context Unit {unit_id}\n{chunk}Role: Definition\nTopic: Vault\n{claim}", "kb.md"


def _sop(unit_id: str) -> tuple[str, str]:
    return (
        f'@k1 ku atomic "{unit_id}"\nset $k1 role Definition\nset $k1 topic "Vault"\nset $k1 claim {json.dumps(SECRET)}\n',
        "kb.cnl",
    )


@pytest.mark.parametrize("source", SOURCES)
def test_a_source_named_like_a_field_keeps_its_units_public(source: str) -> None:
    unit_id = f"{source}::chunk-000::unit-000"
    for text, file in (_md(unit_id, f"{source}::chunk-000"), _sop(unit_id)):
        units, diagnostics = read_text(text, file)
        assert [d for d in diagnostics if d.code in PERMISSION_CODES] == []
        assert [unit.id for unit in units] == [unit_id]


@pytest.mark.parametrize(
    "case",
    [
        _md("regions::chunk-000::unit-000 (Region: EU)"),
        _md("vault::chunk-000::unit-000 Acl staff"),
        _md("Region::EU"),
        _md("region::chunk-eu::unit-000"),
        _md("vault::chunk-000::unit-000", "Region::EU"),
        _sop("acl::staff"),
    ],
    ids=[
        "a label after the id",
        "a label word after the id",
        "a pair, not the schema",
        "not the schema's chunk",
        "a ChunkId pair",
        "a SOP id pair",
    ],
)
def test_a_label_around_or_instead_of_a_schema_id_still_withdraws(case: tuple[str, str]) -> None:
    assert withdrawn(*case)
