"""Issue 23, leaks 1-3, each as the audit reported it: a permission field a reader did not read
made a restricted unit public. Each case must now withdraw the unit with an error at file:line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cnl import read_text
from core.infra.diagnostics import Code
from core.kb.knowledge_base import KnowledgeBase
from core.kernel.session import Session
from core.units import Caller

SECRET = "The vault combination is 4471."
OPEN_TEXT = "The lobby opens at nine."
UNIT = f"""## Context Unit vault::chunk-000::unit-000
Role: Definition
Topic: Vault combination
Claim: {SECRET}
"""
PUBLIC = """## Context Unit lobby::chunk-000::unit-000
Role: Definition
Topic: Lobby hours
Claim: The lobby opens at nine.
"""


def _public_bodies(text: str, file: str) -> tuple[list[str], list]:
    units, diagnostics = read_text(text, file)
    view = KnowledgeBase.from_units(units, diagnostics).view(Caller())
    return [u.body for u in view.units], diagnostics


def _errors_at(diagnostics, line: int) -> list:
    return [d for d in diagnostics if d.is_error and d.line == line]


# --- 1. JSON Lines ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields",
    [
        {"Acl": "staff"},
        {"ACL": ["staff"]},
        {"Region": "EU"},
        {"EffectiveTo": "2000-01-01"},
        {"effective_to": "2000-01-01"},
        {"REGION": "EU", "acl": "staff"},
    ],
)
def test_jsonl_permission_keys_are_case_insensitive(fields: dict) -> None:
    line = json.dumps({"_id": "vault", "text": SECRET, **fields})
    bodies, diagnostics = _public_bodies(line + "\n", "kb.jsonl")
    assert SECRET not in bodies and diagnostics == []


@pytest.mark.parametrize(
    "fields",
    [
        {"acls": ["staff"]},
        {"tags": ["staff"]},
        {"acl": []},
        {"acl": ""},
        {"acl": None},
        {"region": ""},
        {"regoin": "EU"},
        {"metadata": {"acl": "staff"}},
        {"acl": "staff", "ACL": "x"},
        {"owner": "staff"},
    ],
)
def test_jsonl_unread_or_empty_permission_keys_withdraw_the_document(fields: dict) -> None:
    text = json.dumps({"_id": "lobby", "text": "The lobby opens at nine."}) + "\n"
    text += json.dumps({"_id": "vault", "text": SECRET, **fields}) + "\n"
    bodies, diagnostics = _public_bodies(text, "kb.jsonl")
    assert bodies == ["The lobby opens at nine."]
    assert _errors_at(diagnostics, 2), diagnostics


def test_jsonl_misspelt_key_says_what_was_meant() -> None:
    _, diagnostics = read_text(json.dumps({"_id": "v", "text": "x", "tags": ["staff"], "titel": "y"}), "kb.jsonl")
    messages = " ".join(d.message for d in diagnostics)
    assert "did you mean 'Acl'?" in messages and "did you mean 'title'?" in messages


# --- 2. Markdown -----------------------------------------------------------------------------


@pytest.mark.parametrize("between", ["---", "# Notes", "### Access", "***"])
@pytest.mark.parametrize("field", ["Acl: staff", "Region: EU", "acl: staff", "- Acl: staff"])
def test_markdown_permission_line_after_a_units_end_withdraws_it(between: str, field: str) -> None:
    text = f"{PUBLIC}\n{UNIT}\n{between}\n{field}\n"
    bodies, diagnostics = _public_bodies(text, "kb.md")
    assert SECRET not in bodies
    field_line = UNIT.count("\n") + PUBLIC.count("\n") + 4
    assert any(d.code is Code.PERMISSION_OUTSIDE_UNIT for d in _errors_at(diagnostics, field_line))


def test_markdown_permission_line_between_units_withdraws_the_next_one_too() -> None:
    text = f"{PUBLIC}\n---\nAcl: staff\n\n{UNIT}"
    bodies, diagnostics = _public_bodies(text, "kb.md")
    assert bodies == []
    assert "move it into the unit it restricts" in " ".join(d.message for d in diagnostics)


@pytest.mark.parametrize(
    "field", ["  Acl: staff", "\tRegion: EU", "- Acl: staff", "* Acl: staff", "1. Acl: staff", "  - Region: EU"]
)
def test_markdown_indented_or_bulleted_permission_line_is_not_folded_into_the_field_above(field: str) -> None:
    bodies, diagnostics = _public_bodies(f"{UNIT}{field}\n", "kb.md")
    assert SECRET not in bodies and "Acl" not in " ".join(bodies) and "Region" not in " ".join(bodies)
    assert _errors_at(diagnostics, 5)


def test_markdown_front_matter_permission_withdraws_the_whole_file() -> None:
    bodies, diagnostics = _public_bodies(f"---\nacl: staff\n---\n\n{UNIT}\n{PUBLIC}", "kb.md")
    assert bodies == [] and _errors_at(diagnostics, 2)


@pytest.mark.parametrize(
    "heading", ["## ContextUnit vault::chunk-000::unit-000", "# Context Unit vault::chunk-000::unit-000"]
)
def test_md_with_a_misspelt_unit_heading_and_an_acl_line_is_not_served(heading: str) -> None:
    text = UNIT.replace("## Context Unit vault::chunk-000::unit-000", heading) + "Acl: staff\n"
    bodies, diagnostics = _public_bodies(text, "kb.md")
    assert SECRET not in " ".join(bodies)
    assert _errors_at(diagnostics, 5) and _errors_at(diagnostics, 1)  # the Acl line and the heading


@pytest.mark.parametrize("file", ["notes.txt", "notes.md"])
@pytest.mark.parametrize(
    "text",
    [
        f"Vault\n\n{SECRET}\nAcl: staff\n\nThe lobby opens at nine.\n",
        f"Acl: staff\n\n{SECRET}\n\nThe lobby opens at nine.\n",
        f"{SECRET}\n- Region: EU\n",
    ],
)
def test_prose_carrying_a_permission_line_is_withdrawn_with_an_error(file: str, text: str) -> None:
    bodies, diagnostics = _public_bodies(text, file)
    assert SECRET not in " ".join(bodies)
    assert any(d.is_error and d.code is Code.PERMISSION_NOT_READ for d in diagnostics)


def test_prose_without_permission_lines_still_reads() -> None:
    bodies, diagnostics = _public_bodies("Hours\n\nThe lobby opens at 9:30. Note: bring a badge.\n", "notes.txt")
    assert bodies and diagnostics == []


def test_an_edit_that_adds_a_bulleted_acl_line_does_not_publish_on_reload(tmp_path: Path) -> None:
    kb_file = tmp_path / "kb.md"
    kb_file.write_text(f"{PUBLIC}\n{UNIT}Acl: staff\n")
    session = Session.open([tmp_path])
    assert [u.body for u in session.units(Caller())] == ["The lobby opens at nine."]
    kb_file.write_text(f"{PUBLIC}\n{UNIT}---\n- Acl: staff\n")
    session.reload()
    assert SECRET not in [u.body for u in session.units(Caller())]
    assert any(d.is_error and d.file == str(kb_file) for d in session.kb.diagnostics)


# --- 3. SOP ----------------------------------------------------------------------------------

SOP = f"""@k1 ku atomic "vault::chunk-000::unit-000"
set $k1 role Definition
set $k1 topic "Vault combination"
set $k1 claim "{SECRET}"
"""


@pytest.mark.parametrize(
    "line", ["set $k11 acl [staff]", "set $K1 region EU", "sett $k1 acl [staff]", "acl $k1 [staff]", "Acl: staff"]
)
def test_sop_permission_statement_on_a_misspelt_label_withdraws_the_file(line: str) -> None:
    bodies, diagnostics = _public_bodies(SOP + line + "\n", "kb.cnl")
    assert bodies == []
    assert any("every unit of this file is withdrawn" in d.message for d in _errors_at(diagnostics, 5))


def test_sop_misspelt_label_says_which_label_was_meant() -> None:
    _, diagnostics = read_text(SOP + "set $k11 acl [staff]\n", "kb.cnl")
    assert "did you mean '$k1'?" in diagnostics[0].message


def test_sop_misspelt_label_on_another_field_only_reports() -> None:
    bodies, diagnostics = _public_bodies(SOP + 'set $k11 condition "weekdays"\n', "kb.cnl")
    assert bodies == [SECRET] and diagnostics[0].code is Code.UNKNOWN_REFERENCE


def test_ask_does_not_serve_the_unit_of_a_misspelt_sop_label(tmp_path: Path, capsys) -> None:
    from mrptui.cli import main

    (tmp_path / "vault.cnl").write_text(SOP + "set $k11 acl [staff]\n")
    code = main(["ask", "--kb", str(tmp_path), "What is the vault combination?"])
    out, _ = capsys.readouterr()
    assert code == 0 and "4471" not in out


def test_a_title_that_mentions_context_units_is_prose() -> None:
    text = f"# Context units of the vault\n\n{PUBLIC}"
    bodies, diagnostics = _public_bodies(text, "kb.md")
    assert bodies == ["The lobby opens at nine."] and diagnostics == []


def test_a_table_row_naming_a_permission_field_after_a_unit_withdraws_it() -> None:
    bodies, diagnostics = _public_bodies(f"{UNIT}\n---\n\n| Acl | staff |\n", "kb.md")
    assert bodies == [] and _errors_at(diagnostics, 8)


# --- plain text: a permission field written inside a line -------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        f"{SECRET} Note — acl: staff",
        f"{SECRET} (Region=EU)",
        f"{SECRET} EffectiveTo: 2000-01-01",
        f"{SECRET} Effective To: 2000-01-01",
        f"Staff only, \u0430cl: staff. {SECRET}",
        f"{SECRET} [ACL: vault-team]",
    ],
)
def test_plain_text_withdraws_a_paragraph_that_writes_a_permission_field_inside_a_line(line: str) -> None:
    text = f"{OPEN_TEXT}\n\n{line}\n"
    bodies, diagnostics = _public_bodies(text, "notes.txt")
    assert bodies == [OPEN_TEXT]
    [error] = _errors_at(diagnostics, 3)
    assert error.code is Code.PERMISSION_NOT_READ and error.col > 1 and error.author_only


@pytest.mark.parametrize(
    "line",
    [
        "He described the region: dry, hot and sparse.",
        "Sales by region: north rose by five percent.",
        "Open https://example.org/?region=eu for the map.",
        "Edit the ACL: add the new user first.",
    ],
)
def test_plain_text_prose_that_only_mentions_a_label_stays(line: str) -> None:
    bodies, diagnostics = _public_bodies(f"{line}\n", "notes.txt")
    assert bodies == [line] and diagnostics == []
