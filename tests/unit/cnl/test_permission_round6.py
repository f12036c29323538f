"""Red-team round six on the permission-label grammar (docs/security.md, "Red-team round six"):
the leftovers round five listed (a field's name with no separator but its form, names whose value
decides, date names and restrictions in words, digits for letters, a URL's query, tables padded or
written in HTML, a CSV pair in running text) and new shapes of each. Each withdraws its unit for
every caller and says why; the public text beside each stays public."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.cnl import read_text
from core.cnl.permission_names import permission_label
from core.cnl.permission_notices import confidentiality_level, restriction_notice
from tests.support.permission_cases import SECRET, assert_ask_serves_none, attack_kb, labelled
from tests.support.permission_cases import jsonl as _jsonl
from tests.support.permission_cases import md as _md
from tests.support.permission_cases import txt as _txt
from tests.support.permission_cases import withdrawn as _withdrawn

# The leftovers round five listed (docs/security.md, "Still open" before this round).
KNOWN = {
    "name and its value in brackets": _txt("Region (EU)"),
    "name in capitals at a line start": _txt("REGION EU"),
    "emphasis as the separator": _txt("**Region** EU"),
    "heading over its value": _txt("### Region\nEU"),
    "heading over its value, Markdown KB": _md("### Region\nEU\n"),
    "sensitivity level": _txt("Sensitivity: Private"),
    "classification level": _txt("Classification: confidential"),
    "go-live date": _txt("Go-live date: 2027-01-01"),
    "sunset": _txt("Sunset: 2020-01-01"),
    "for staff eyes only": _txt("For staff eyes only"),
    "staff only": _txt("Staff only"),
    "internal use only": _txt("Internal use only"),
    "digit for a letter": _txt("Acc3ss: hr"),
    "digit for a letter, region": _txt("Reg1on: EU"),
    "URL query": _txt("https://kb.example.com/vault?acl=staff"),
    "command-line option": _txt("--region EU"),
    "mention": _txt("@region EU"),
    "three-column pair table padded": _txt("| Region | EU | - |\n|---|---|---|\n| Code | 4471 | - |"),
    "CSV pair closing running text": _txt("The code is 4471. Region,EU"),
    "CSV pair closing a JSON text": _jsonl(f"{SECRET} Region,EU"),
    "HTML three-column pair table": _txt(
        "<table><tr><th>Region</th><th>EU</th><th>-</th></tr><tr><td>Code</td><td>4471</td><td>-</td></tr></table>"
    ),
}

# New shapes of this round.
NEW = {
    "name and its value in square brackets": _txt("Region [EU]"),
    "name and its value in fullwidth brackets": _txt("Region\uff08EU\uff09"),
    "underscore emphasis": _txt("__Region__ EU"),
    "code span": _txt("`region` EU"),
    "emphasis in a claim": _md(claim_tail="\n  **Region** EU"),
    "brackets in a claim": _md(claim_tail="\n  Region (EU)"),
    "capitals in a JSON text": _jsonl(f"{SECRET}\nREGION EU"),
    "synonym in capitals, bracketed": _txt("ACCESS (staff)"),
    "date in brackets": _txt("Expires (2020-01-01)"),
    "sensitivity label of two words": _txt("Sensitivity label: Confidential"),
    "classification after a dash": _txt("Data classification - Internal"),
    "level with a degree": _jsonl(f"{SECRET}\nClassification: Strictly Confidential"),
    "level, bulleted": _md("- Sensitivity: Private\n"),
    "level after an equals sign": _txt("Sensitivity = restricted"),
    "notice in a sentence of its own": _txt("For internal use only."),
    "notice hyphenated": _txt("Staff-only"),
    "notice naming who may see": _txt("Only visible to staff"),
    "notice closing a claim": _md(claim_tail=" Staff only."),
    "sunset with no separator": _txt("Sunset 2020-01-01"),
    "go-live with no separator": _txt("Go-live 2027-01-01"),
    "go live in two words": _txt("Go live: 2027-01-01"),
    "slash command": _txt("/acl staff"),
    "mention in a JSON text": _jsonl(f"{SECRET}\n@acl staff"),
    "query parameter in a JSON text": _jsonl(f"{SECRET} See https://kb.example/v?id=1&acl=staff"),
    "digit for a letter, first": _txt("4cl: staff"),
    "zero for o": _txt("Regi0n: EU"),
    "CSV semicolon closing a JSON text": _jsonl(f"{SECRET} Acl;staff"),
    "heading over its value in a JSON text": _jsonl(f"{SECRET}\n## Region\nEU"),
    "notice with its adjective first": _txt("Visible only to staff"),
    "notice not to release": _txt("Do not distribute"),
    "notice as a typed value": _txt("Audience\tstaff only"),
    "marking alone in capitals": _txt("CONFIDENTIAL"),
    "hashtag": _txt("#region EU"),
    "HTML header naming an unambiguous column": _txt(
        "<table><tr><th>ACL</th><th>Population</th><th>Area</th></tr><tr><td>staff</td><td>5.5</td><td>338</td></tr>"
        "<tr><td>hr</td><td>10.4</td><td>450</td></tr></table>"
    ),
}

PUBLIC = {
    "a field's name in prose": _txt("The country is grouped into four regions: Finland, Sweden."),
    "only in a sentence": _txt("Only a few staff knew the code."),
    "a topic then only": _txt("Euro inflation only"),
    "brackets in a sentence": _txt("The Region (as defined by the council) has many lakes."),
    "a heading in capitals": _txt("ACCESS DENIED"),
    "a title in capitals": _txt("REGIONS OF FINLAND"),
    "emphasis opening a sentence": _txt("**Note** the vault is steel."),
    "a sensitivity": _txt("Sensitivity: 0.85"),
    "a classification": _txt("Classification: Mammalia"),
    "private as an adjective": _txt("Type: private school"),
    "go-live in a sentence": _txt("Go-live was a success."),
    "a sunset's time": _txt("Sunset: 6:42 pm"),
    "a heading over a sentence": _txt("## Region\nThe region has many lakes."),
    "a map's query": _txt("Open https://example.org/?region=eu for the map."),
    "not for in a sentence": _txt("Not for the faint of heart."),
    "a year in brackets": _txt("Finland (2019)"),
    "digits in a name": _txt("The B52s played at 8pm."),
    "a publication date": _txt("Publication date: 2019-05-12"),
    "an HTML header of three columns": _txt(
        "<table><tr><th>Region</th><th>Population</th><th>Area</th></tr><tr><td>Finland</td><td>5.5</td>"
        "<td>338</td></tr><tr><td>Sweden</td><td>10.4</td><td>450</td></tr></table>"
    ),
    "a door's sign": _txt("Do not disturb"),
    "only before a verb": _txt("Only listen to music."),
    "a Markdown header of three columns": _txt(
        "| Region | Population | Area |\n|---|---|---|\n| Finland | 5.5 | 338 |\n| Sweden | 10.4 | 450 |"
    ),
}

CASES = labelled({**KNOWN, **NEW}, PUBLIC)


@pytest.mark.parametrize(("text", "file", "secret"), CASES.values(), ids=CASES.keys())
def test_each_label_withdraws_its_unit_and_public_text_stays(text: str, file: str, secret: bool) -> None:
    assert _withdrawn(text, file) is secret


@pytest.mark.parametrize(
    ("name", "field"),
    [("Go-live date", "EffectiveFrom"), ("Sunset", "EffectiveTo"), ("Acc3ss", "Acl"), ("4cl", "Acl"), ("B52s", None)],
)
def test_a_name_is_read_from_its_words_and_letters(name: str, field: str | None) -> None:
    assert permission_label(name) == field


@pytest.mark.parametrize(
    ("value", "level"),
    [("Private", True), ("strictly confidential", True), ("Internal use only", True), ("0.85", False)]
    + [("Mammalia", False), ("private school", False), ("very nice", False)],
)
def test_a_value_decides_by_its_type(value: str, level: bool) -> None:
    assert confidentiality_level(value) is level


@pytest.mark.parametrize(
    ("line", "notice"),
    [("staff only", True), ("authorized personnel only", True), ("not for public release", True)]
    + [("do not publish this page", True), ("visible only to staff", True)]
    + [("euro inflation only", False), ("the only", False), ("not for the faint", False), ("do not disturb", False)],
)
def test_a_notice_is_a_whole_line_of_its_grammar(line: str, notice: bool) -> None:
    assert (restriction_notice(line) is not None) is notice


def test_ask_serves_no_unit_of_this_round_to_any_caller(tmp_path: Path, capsys) -> None:
    assert_ask_serves_none(tmp_path, {**KNOWN, **NEW}, "staff,hr", capsys)


@pytest.mark.parametrize(
    ("text", "advice"),
    [
        ("Staff only", "write the notice inside a sentence"),
        ("Sensitivity: Private", "name the field otherwise"),
        ("REGION EU", "lower case"),
        ("### Region\nEU", "give the section a sentence"),
    ],
)
def test_a_withdrawal_that_may_be_public_says_how_to_keep_it_public(text: str, advice: str) -> None:
    _, diagnostics = read_text(f"{SECRET}\n{text}\n", "notes.txt")
    assert any(advice in d.message and d.line == 2 for d in diagnostics)


def test_check_names_the_notice_it_withdrew(tmp_path: Path, capsys) -> None:
    from mrptui.cli import main

    kb, _ = attack_kb(tmp_path, {"notice": _txt("Internal use only")})
    assert main(["check", str(kb)]) == 1
    out, err = capsys.readouterr()
    assert "Internal use only" in out + err and "attack-00.txt:2" in out + err
