"""Red-team round three on the permission-label grammar (docs/security.md, "The permission-label
grammar"): text a KB author pastes from elsewhere (tables, HTML, headers, configuration). Public
data that only looks like a label stays public; a label written in such a format withdraws its
unit for every caller."""

from __future__ import annotations

import json

import pytest

from core.cnl.permission_inline import permission_inline
from tests.support.permission_cases import SECRET
from tests.support.permission_cases import jsonl as _jsonl
from tests.support.permission_cases import md as _md
from tests.support.permission_cases import sop as _sop
from tests.support.permission_cases import txt as _txt
from tests.support.permission_cases import withdrawn as _withdrawn

TSV = "Region\tPopulation\tArea\nFinland\t5.5\t338\nSweden\t10.4\t450"
MARKDOWN_TABLE = "| Region | Population | Area |\n|---|:---:|---|\n| Finland | 5.5 | 338 |\n| Sweden | 10.4 | 450 |"

PUBLIC = {
    # A table's header row names its columns: `Region` there is the column of the rows below (a
    # header of two cells is a name and its value as often: test_permission_round5.py).
    "TSV table, text": _txt(TSV),
    "TSV table, JSON text": _jsonl(f"{SECRET}\n{TSV}"),
    "TSV table, Markdown continuation": _md(claim_tail="\n  " + TSV.replace("\n", "\n  ")),
    "Markdown table, text": _txt(MARKDOWN_TABLE),
    "Markdown table, JSON text": _jsonl(f"{SECRET}\n{MARKDOWN_TABLE}"),
    # `http-equiv` names an HTTP header: `Expires` there is a cache's date, not the unit's.
    "HTTP header meta, text": _txt('<meta http-equiv="Expires" content="Tue, 01 Jan 2030 00:00:00 GMT">'),
    "HTTP header meta, claim": _md(claim_tail=' <meta http-equiv="expires" content="0">'),
    # A synonym as a compound's later part is a modifier's object; and prose decides a first part.
    "compound, synonym last": _txt("user_group: admins"),
    "compound, English value": _txt("Access-point: the north gate was the only way in."),
    "XML element, English value": _txt("<access>the north gate was the only way in</access>"),
    # A sentence's start holds prose as often as a line's does.
    "sentence start, English value": _txt("The gate was shut. Access: the north door was the only way in."),
    "sentence start, ellipsis in prose": _txt("We waited. Groups... they came and went all day."),
    "sentence start, dash in prose": _txt("Sales fell. Regions - north, south and the coast - all lost money."),
}

WITHDRAWN = {
    # A table's data rows are still label positions, and so is a header cell holding a label.
    "TSV data row": _txt("Name\tValue\nRegion\tEU"),
    "TSV header, unambiguous name": _txt("Acl\tRule\nstaff\tallow"),
    "TSV header, unambiguous name in a cell": _jsonl(f"{SECRET}\nVault ACL\tRule\nstaff\tallow"),
    "TSV header, label in a cell": _txt("Region: EU\tNote\nx\ty"),
    "Markdown table, data row": _txt("| Field | Value |\n|---|---|\n| Region | EU |"),
    "Markdown table, header with a date": _txt("| Expires | 2020-01-01 |\n|---|---|\n| x | y |"),
    "TSV row with no row below": _txt("Region\tEU"),
    "TSV row, a sentence in a cell": _jsonl(f"{SECRET} Region\tEU\nx\ty"),
    "HTTP header meta, a field's own name": _txt('<meta http-equiv="Region" content="EU">'),
    "HTTP header meta, unambiguous name": _md(claim_tail=' <meta http-equiv="acl" content="staff">'),
    "meta name, English date name": _txt('<meta name="expires" content="2020-01-01">'),
    # A compound key named by its first part, an English synonym: an attribute of the field.
    "snake case compound, YAML": _txt("access_level: restricted"),
    "kebab case compound, INI": _txt("[document]\nAccess-Level = staff"),
    "camel case compound, claim": _md(claim_tail=" accessLevel: staff"),
    "camel case compound, unambiguous part, prose": _jsonl(f"{SECRET} See userAcl: staff"),
    "camel case compound, own name part": _txt("docRegion: EU"),
    "snake case compound, list value": _txt("acl_tags: [staff]"),
    # Prose punctuation as a separator, and a sentence's start as a line's.
    "em dash, SOP claim": _sop(" Region \u2014 EU"),
    "ellipsis, text": _txt("Region\u2026 EU"),
    "three dots, claim": _md(claim_tail=" Region... EU"),
    "ellipsis, JSON text": _jsonl(f"{SECRET} Region\u2026 EU"),
    "bar, then a sentence": _jsonl(f"{SECRET} Region | EU. It opens at nine."),
    "em dash, then a sentence": _md(claim_tail=" Region \u2014 EU. It opens at nine."),
    "label after a sentence, then another": _txt("See below. Region: EU. The vault is old."),
    "label after a sentence, claim": _md(claim_tail=" See below. Region: EU, then the rest."),
    "English name, typed value, then a sentence": _jsonl(f"{SECRET} Audience: staff. It opens at nine."),
    "sentence start, look-alike letter": _jsonl(f"{SECRET} R\u0435gion: EU. It opens at nine."),
    "sentence start, joiner inside the name": _md(claim_tail=" Re\u200dgion: EU. It opens at nine."),
    "sentence start, compound key": _jsonl(f"{SECRET} Access-Level = staff. It opens at nine."),
    "sentence start after a no-break space": _jsonl(f"{SECRET}\u00a0Region: EU. It opens at nine."),
    "sentence start with no space": _md(claim_tail="Region: EU. It opens at nine."),
    # HTML as a browser shows it: a row's cells, a block's line start, a term and its definition.
    "HTML table row": _txt("<table><tr><td>Region</td><td>EU</td></tr></table>"),
    "HTML row header and cell, claim": _md(claim_tail=" <tr><th>Region</th><td>EU</td></tr>"),
    "HTML paragraph, JSON text": _jsonl(f"{SECRET}<p>Region: EU</p>"),
    "HTML list item, claim": _md(claim_tail=" <ul><li>Audience - staff</li></ul>"),
    "HTML definition list": _jsonl(f"<dl><dt>Region</dt><dd>EU</dd></dl> {SECRET}"),
    "XML element, text": _txt("<region>EU</region>"),
    "XML element, claim": _md(claim_tail=" <Audience>staff</Audience>"),
    "compound key in JSON metadata": (
        json.dumps({"_id": "vault", "title": "Vault", "text": SECRET, "metadata": {"visibility_scope": "internal"}})
        + "\n",
        "kb.jsonl",
    ),
}


@pytest.mark.parametrize(("text", "file"), PUBLIC.values(), ids=PUBLIC.keys())
def test_pasted_public_data_that_looks_like_a_label_stays_public(text: str, file: str) -> None:
    assert not _withdrawn(text, file)


@pytest.mark.parametrize(("text", "file"), WITHDRAWN.values(), ids=WITHDRAWN.keys())
def test_a_label_in_a_pasted_format_withdraws_its_unit(text: str, file: str) -> None:
    assert _withdrawn(text, file)


FINDINGS = {
    "sentence start": (
        "The code is 4471. See below. Region: EU. It opens.",
        "Region",
        30,
        "sentence start",
        "separator",
    ),
    "equals sign": (
        "The code is 4471 (region=EU)",
        "region",
        19,
        "running text",
        "`=` or a look-alike of `:` and a value",
    ),
    "quoted key": ('Note {"region": "EU"}', "region", 8, "running text", "quoted key"),
    "table cell": ("Topic: Vault | Region | EU", "Region", 16, "table cell", "name alone in a cell"),
}


@pytest.mark.parametrize(("text", "name", "column", "position", "reason"), FINDINGS.values(), ids=FINDINGS.keys())
def test_a_finding_says_what_was_read_where_and_why(
    text: str, name: str, column: int, position: str, reason: str
) -> None:
    found = permission_inline(text)
    assert found is not None and not found.shown
    assert (found.name, found.span, found.position, found.reason) == (
        name,
        (column, column + len(name)),
        position,
        reason,
    )
    assert text[found.span[0] - 1 : found.span[1] - 1] == name


def test_a_finding_in_markup_says_it_was_read_as_shown() -> None:
    found = permission_inline("The code is 4471 <meta name='acl' content='staff'>")
    assert found is not None and found.shown and (found.name, found.label) == ("acl", "Acl")
