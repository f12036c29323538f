"""Red-team round five on the permission-label grammar (docs/security.md, "The permission-label
grammar"): the leftovers round four listed (a two-column table's first row, labels not yet read,
names hyphenated over a line break) and new shapes (section headers, markup languages' forms,
quoted keys, look-alike letters, tables whose rows are all numbers). Each withdraws its unit for
every caller and says why; the public text beside each stays public."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.cnl.permission_names import permission_label
from tests.support.permission_cases import SECRET, assert_ask_serves_none, attack_kb
from tests.support.permission_cases import jsonl as _jsonl
from tests.support.permission_cases import md as _md
from tests.support.permission_cases import sop as _sop
from tests.support.permission_cases import txt as _txt
from tests.support.permission_cases import withdrawn as _withdrawn

# The leftovers round four listed (docs/security.md, "Still open" before this round).
KNOWN = {
    "Markdown pair table over one row": _txt("| Region | EU |\n|---|---|\n| Code | 4471 |"),
    "Markdown pair table over one row, claim": _md(claim_tail="\n  | Region | EU |\n  |---|---|\n  | Code | 4471 |"),
    "Markdown pair table over one row, JSON text": _jsonl(f"{SECRET}\n| Region | EU |\n|---|---|\n| Code | 4471 |"),
    "publish date": _txt("Publish date: 2027-01-01"),
    "publish date, bullet": _md("- Publish date: 2027-01-01\n"),
    "security level": _txt("Security Level: restricted"),
    "security level, JSON text": _jsonl(f"{SECRET}\nSecurity Level: restricted"),
    "date label of five words": _txt("Not to be published before 2027-01-01"),
    "date label of seven words": _txt("Do not show this page before 2027-01-01"),
    "pointing back": _txt("staff <- Acl"),
    "greater-than, no blanks": _txt("Region>EU"),
    "CSV comma": _txt("Region,EU"),
    "CSV semicolon": _txt("Region;EU"),
    "CSV two rows": _txt("Region,EU\nOwner,Ops"),
    "hyphenated over a break": _txt("Ac-\ncess: hr"),
    "hyphenated over a break, region": _txt("Re-\ngion: EU"),
    "hyphenated over a break, two words": _txt("Acc-\ness Level: staff"),
    "hyphenated in a line": _txt("Re-gion: EU"),
}

# New shapes of this round.
NEW = {
    "YAML front matter": _txt("---\ntitle: Vault\naccess: [hr]\n---"),
    "INI section named as a field": _txt("[region]\nname = EU"),
    "TOML table named as a field": _md("[access]\n"),
    "git-config section": _txt('[region "EU"]'),
    "TeX command": _txt("\\region{EU}"),
    "wiki template": _jsonl(f"{SECRET}\n{{{{region|EU}}}}"),
    "PHP array key": _txt("'region' => 'EU'"),
    "quoted CSV": _txt('"Region","EU"\n"Owner","Ops"'),
    "HTML header pair": _txt("<table><tr><th>Region</th><th>EU</th></tr><tr><td>Code</td><td>4471</td></tr></table>"),
    "Markdown pair table over rows of numbers": _txt("| Region | EU |\n|---|---|\n| Code | 4471 |\n| Floor | 3 |"),
    "TSV pair table over rows of numbers": _txt("Region\tEU\nCode\t4471\nFloor\t3"),
    "Markdown pair table with no rows": _txt("| Region | EU |\n|---|---|"),
    "greater-than between blanks": _md("- Region > EU\n"),
    "pointing back, JSON text": _jsonl(f"{SECRET}\nstaff <- Acl"),
    "pointing back, arrow sign": _txt("EU \u2190 Region"),
    "CSV comma, JSON text": _jsonl(f"{SECRET}\nAcl;staff"),
    "TeX command, SOP claim": _sop(" \\acl{staff}"),
    "security classification": _md("- Security Classification: confidential\n"),
    "dated last sentence ending in a stop": _jsonl(f"{SECRET} Effective 2027-01-01."),
    "embargo date": _txt("Embargo date: 2027-01-01"),
    "Cyrillic letter in the name": _txt("\u0410cl: staff"),
    "Greek letter in the name": _txt("\u03a1egion: EU"),
    "RST field list": _txt(":Access: staff"),
    "Org-mode property": _txt(":PROPERTIES:\n:REGION: EU\n:END:"),
    "e-mail header": _txt("From: a@example.com\nX-Region: EU"),
    "key of five parts": _txt("x-amz-meta-region: EU"),
    "Markdown link definition": _txt("[region]: EU"),
    "Java properties, escaped colon": _txt("region\\:EU"),
    "date after its preposition": _txt("Effective: from 2027-01-01"),
    "HTML definition list over lines": _jsonl(f"{SECRET}\n<dl>\n<dt>Region</dt>\n<dd>EU</dd>\n</dl>"),
    "row with no outer bars": _txt("Region|EU"),
    "GitHub table with no outer bars": _txt("Region | EU\n--- | ---\nCode | 4471"),
    # Ambiguous, so withdrawn with a diagnostic (fail closed): two cells headed by a field's name
    # are a name and its value as often as two columns' names.
    "TSV header of two cells over numbers": _txt("Region\tPopulation\nFinland\t5.5\nSweden\t10.4"),
    "Markdown header of two cells over numbers": _txt(
        "| Region | Population |\n|---|---|\n| Finland | 5.5 |\n| Sweden | 10.4 |"
    ),
    "HTML header cells": _txt("<table><tr><th>Region</th><th>Population</th></tr><tr><td>Finland</td></tr></table>"),
}

PUBLIC = {
    "a release date": _txt("Release date: 2019-05-12"),
    "a date noun after another word": _txt("Due date: 2027-01-01"),
    "comparison in a result": _txt("p > 0.05 in every group"),
    "a comma with no blank in prose": _txt("Yes,we opened the vault at nine."),
    "a CSV row of no field": _txt("Finland,5.5\nSweden,10.4"),
    "a negated sentence with no date": _txt("Do not open the door before the guard arrives."),
    "a sentence ending in a date": _txt("We stayed in the city until 2020-01-01."),
    "a header of three columns": _txt(
        "| Region | Population | Area |\n|---|---|---|\n| Finland | 5.5 | 338 |\n| Sweden | 10.4 | 450 |"
    ),
    "a field's name in a table's second column": _txt("Country\tRegion\nFinland\tNordic\nSweden\tNordic"),
    "a TeX command of no field": _txt("\\textbf{steel}"),
    "a wiki template of no field": _txt("{{cite web|url=example.com}}"),
    "a section of no field": _txt("[general]\nname = vault"),
    "an arrow back in code": _txt("x <- 5"),
    "a security deposit": _txt("Security deposit: $500"),
    "security alone": _txt("Security: guards at the gate"),
    "a classification": _txt("Classification: Mammalia"),
    "a sensitivity": _txt("Sensitivity: 0.85"),
    "a hyphenated word of no field": _txt("The re-\ngional office: closed."),
    "a publication date": _txt("Publication date: 2019-05-12"),
    "a bar in prose": _txt("Options: north|south"),
    "a definition list of no field": _txt("<dl>\n<dt>Steel</dt>\n<dd>an alloy</dd>\n</dl>"),
}


CASES = {
    **{name: (*case, True) for name, case in {**KNOWN, **NEW}.items()},
    **{n: (*c, False) for n, c in PUBLIC.items()},
}


@pytest.mark.parametrize(("text", "file", "secret"), CASES.values(), ids=CASES.keys())
def test_each_label_withdraws_its_unit_and_public_text_stays(text: str, file: str, secret: bool) -> None:
    assert _withdrawn(text, file) is secret


@pytest.mark.parametrize(
    ("name", "field"),
    [
        ("Publish date", "EffectiveFrom"),
        ("Embargo date", "EffectiveFrom"),
        ("Release date", None),
        ("Not to be published before", "EffectiveFrom"),
        ("Do not use this after", "EffectiveTo"),
        ("We stayed in the city until", None),
        ("It must never be retrieved after", None),
        ("Security Level", "Acl"),
    ],
)
def test_a_name_is_read_from_its_words(name: str, field: str | None) -> None:
    assert permission_label(name) == field


def test_ask_serves_no_unit_of_this_round_to_any_caller(tmp_path: Path, capsys) -> None:
    assert_ask_serves_none(tmp_path, {**KNOWN, **NEW}, "staff,hr", capsys)


def test_check_names_the_ambiguous_table_it_withdrew(tmp_path: Path, capsys) -> None:
    from mrptui.cli import main

    kb, _ = attack_kb(tmp_path, {"pair": _txt("| Region | EU |\n|---|---|\n| Code | 4471 |")})
    assert main(["check", str(kb)]) == 1
    out, err = capsys.readouterr()
    assert "Region" in out + err and "attack-00.txt:2" in out + err
