"""Red-team round four on the permission-label grammar (docs/security.md, "The permission-label
grammar"): the gaps round three left (a name of several words, a tab-separated row taken for a
header, letters spaced out, pointers as separators, date labels read from their words) and new
disguises of each, in every format. Each withdraws its unit for every caller; the public text
beside each stays public."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.cnl.permission_names import permission_label
from tests.support.permission_cases import SECRET, assert_ask_serves_none
from tests.support.permission_cases import attack_kb as _kb
from tests.support.permission_cases import jsonl as _jsonl
from tests.support.permission_cases import md as _md
from tests.support.permission_cases import sop as _sop
from tests.support.permission_cases import txt as _txt
from tests.support.permission_cases import withdrawn as _withdrawn

# The gaps round three left (docs/security.md, "Limits" before this round).
KNOWN = {
    # A name of several words whose first is a field's word: an attribute of the field.
    "several words, text": _txt("Access Level: staff"),
    "several words, bullet": _md("- Access Level: staff\n"),
    "several words, JSON key": _jsonl(SECRET, metadata={"Access Level": "staff"}),
    "several words, JSON text": _jsonl(f"{SECRET}\nAccess Level: staff"),
    "several words, clearance": _txt("Clearance Level: secret"),
    "several words, claim": _md(claim_tail=" Access tier: staff"),
    # A tab-separated row like the row under it is data, not a header.
    "TSV two-column table, first row": _txt("Region\tEU\nOwner\tOps"),
    "TSV first row, JSON text": _jsonl(f"{SECRET}\nRegion\tEU\nOwner\tOps"),
    # Letters spaced out, pointers, and date labels read from their words.
    "spaced letters, text": _txt("R e g i o n : EU"),
    "spaced letters, ACL": _txt("A C L: hr"),
    "spaced letters, JSON text": _jsonl(f"{SECRET} R e g i o n : EU"),
    "double angle, text": _txt("Region >> EU"),
    "angle quotation mark, text": _txt("Region \u00bb EU"),
    "angle quotation mark, JSON text": _jsonl(f"{SECRET} Region \u00bb EU"),
    "arrow, text": _txt("Region \u2192 EU"),
    "fat arrow, text": _txt("Acl => staff"),
    "embargoed until": _txt("Embargoed until 2027-01-01"),
    "embargoed until, colon": _txt("Embargoed until: 2027-01-01"),
    "not before": _txt("Not before 2027-01-01"),
    "publish on": _txt("Publish on 2027-01-01"),
    "withdrawn after": _txt("Withdrawn after 2020-01-01"),
    "available from": _txt("Available from: 2027-01-01"),
}

# New disguises of this round, in other shapes.
NEW = {
    "several words, fullwidth colon": _txt("Access Level\uff1a staff"),
    "several words, ratio sign": _md(claim_tail=" Clearance Level \u2236 secret"),
    "several words, no-break space": _txt("Access\u00a0Level: staff"),
    "several words, zero-width joiner": _txt("Acc\u200dess Level: staff"),
    "several words, nested YAML": _txt("document:\n  security:\n    visibility scope: internal"),
    "several words, numbered": _txt("2) Permission Set: hr"),
    "several words, split over a line break": _txt("Access Level\n: staff"),
    "several words, INI": _txt("[document]\nAccess Level = staff"),
    "several words, JSON key at depth": _jsonl(SECRET, metadata={"doc": {"Clearance Level": "secret"}}),
    "several words, fullwidth letters": _txt("\uff21\uff43\uff43\uff45\uff53\uff53 Level: staff"),
    "several words, value on the next line": _md("- Access Level:\n  staff\n"),
    "spaced letters, no-break spaces": _txt("R\u00a0e\u00a0g\u00a0i\u00a0o\u00a0n: EU"),
    "spaced letters, two blanks": _txt("a  c  l :  staff"),
    "spaced letters, bullet": _md("- R e g i o n: EU\n"),
    "spaced letters, SOP claim": _sop(" A C L: hr"),
    "spaced letters, sentence start": _jsonl(f"{SECRET} R e g i o n : EU. It opens at nine."),
    "spaced letters, table cell": _txt("| Vault | R e g i o n | EU |"),
    "spaced letters, JSON metadata": _jsonl(SECRET, metadata={"note": "R e g i o n: EU"}),
    "angle quotation mark, claim": _md(claim_tail=" Region \u00bb EU"),
    "double angle, SOP claim": _sop(" Acl >> staff"),
    "squiggly arrow, text": _txt("Audience ~> staff"),
    "double arrow, text": _txt("Region \u21d2 EU"),
    "heavy arrow, bullet": _md("- Region \u279c EU\n"),
    "white arrow, JSON text": _jsonl(f"{SECRET}\nRegion \u21e8 EU"),
    "much greater-than, text": _txt("Region \u226b EU"),
    "hidden until, claim": _md(claim_tail=" Hidden until 2027-01-01"),
    "withdrawn after, JSON text": _jsonl(f"{SECRET} Withdrawn after 2020-01-01"),
    "withdrawn after, colon": _jsonl(f"{SECRET}\nWithdrawn after: 2020-01-01"),
    "not visible before, bullet": _txt("- Not visible before 2027-01-01"),
    "embargoed until, month name": _txt("Embargoed until 1 January 2027"),
    "publish on, day first": _md("- Publish on 01/02/2027\n"),
    "available until, dash": _txt("Available until - 2020-01-01"),
    "TSV first row, three columns": _txt("Region\tEU\tnote\nOwner\tOps\tnone"),
    "TSV first row, a number under it": _txt("Region\tEU\nCode\t4471\nOwner\tOps"),
    "TSV first row, a number under it, JSON text": _jsonl(f"{SECRET}\nRegion\tEU\nFloor\t3\nOwner\tOps"),
    "TSV first row, Markdown continuation": _md(claim_tail="\n  Region\tEU\n  Owner\tOps"),
    "Markdown two-column table, first row": _txt("| Region | EU |\n|---|---|\n| Owner | Ops |"),
    "Markdown two-column table, claim": _md(claim_tail="\n  | Region | EU |\n  |---|---|\n  | Owner | Ops |"),
    "double blank inside the name": _txt("Access  Level: staff"),
    "several words, two-word field word": _txt("Visible To Groups: staff"),
    "embargoed until, ordinal date": _txt("Embargoed until 1st January 2027"),
    "pointer sign, no blanks": _txt("Region\u00bbEU"),
    "TSV first row over one row holding a number": _txt("Region\tEU\nCode\t4471"),
    "TSV first row over one row holding a number, JSON text": _jsonl(f"{SECRET}\nRegion\tEU\nFloor\t3"),
    # Ambiguous, so withdrawn with a diagnostic (fail closed): a tag for a person's role, a table
    # whose first row differs from the next in no type (a header of names over names, or data).
    "person's role, tag value": _txt("Group leader: staff"),
    "table of words only": _txt("Region\tCapital\nFinland\tHelsinki"),
    "TSV header over one row of numbers": _txt("Region\tPopulation\nFinland\t5.5"),
    "Markdown header over one row of numbers": _md(
        claim_tail="\n  | Region | Population |\n  |---|---|\n  | Finland | 5.5 |"
    ),
}

PUBLIC = {
    "a person's role": _txt("Group leader: John Smith"),
    "a person's role after a word": _txt("Tour group leader: Anna Berg"),
    "people's roles": _md("- Region managers: Anna Berg and John Smith\n"),
    "a person's role, JSON text": _jsonl(f"{SECRET}\nGroup leader: Dr. Jane Doe"),
    "a synonym in running prose": _txt("The villages were grouped into four regions: Finland, Sweden."),
    "TSV header over numbers": _txt("Region\tPopulation\tArea\nFinland\t5.5\t338\nSweden\t10.4\t450"),
    "a day recorded": _txt("Posted on 2020-01-01"),
    "a birthday": _txt("Born on 4 July 1990"),
    "a day recorded, month name": _md("- Published on 12 May 2019\n"),
    "a preposition first": _txt("From 2020-01-01"),
    "a date phrase with no date": _txt("Available from: the shop on Main Street"),
    "a date phrase in a sentence": _txt("The shop was open until 2020-01-01 and then closed."),
    "breadcrumbs": _txt("Home \u00bb Products \u00bb Vaults"),
    "spaced letters of no label": _txt("We sang A B C: the children joined in."),
    "arrow in prose": _txt("Prices \u2192 up by a third since the spring."),
    "TSV header over rows of numbers": _jsonl(
        f"{SECRET}\nRegion\tPopulation\tArea\nFinland\t5.5\t338\nSweden\t10.4\t450"
    ),
    "Markdown table over rows of numbers": _md(
        claim_tail="\n  | Region | Population | Area |\n  |---|---|---|\n  | Finland | 5.5 | 338 |\n  | Sweden | 10.4 | 450 |"
    ),
    "a compound's value that is no tag": _txt("Access road: closed in winter"),
    "a compound's number": _txt("Group size: 12"),
    "a record of a start": _txt("Member since 2015-03-01"),
}


@pytest.mark.parametrize(("text", "file"), KNOWN.values(), ids=KNOWN.keys())
def test_the_gaps_round_three_left_withdraw_their_unit(text: str, file: str) -> None:
    assert _withdrawn(text, file)


@pytest.mark.parametrize(("text", "file"), NEW.values(), ids=NEW.keys())
def test_new_disguises_withdraw_their_unit(text: str, file: str) -> None:
    assert _withdrawn(text, file)


@pytest.mark.parametrize(("text", "file"), PUBLIC.values(), ids=PUBLIC.keys())
def test_public_text_beside_them_stays_public(text: str, file: str) -> None:
    assert not _withdrawn(text, file)


@pytest.mark.parametrize(
    ("name", "field"),
    [
        ("Embargoed until", "EffectiveFrom"),
        ("Hidden until", "EffectiveFrom"),
        ("Not before", "EffectiveFrom"),
        ("Not visible before", "EffectiveFrom"),
        ("Withdrawn after", "EffectiveTo"),
        ("Available until", "EffectiveTo"),
        ("Publish on", "EffectiveFrom"),
        ("Access Level", "Acl"),
        ("Region code", "Region"),
        ("Restricted To Group", "Acl"),
        ("Posted on", None),
        ("Group of", None),
        ("Population Region", None),
    ],
)
def test_a_name_of_several_words_is_read_from_its_words(name: str, field: str | None) -> None:
    assert permission_label(name) == field


def test_ask_serves_no_unit_of_this_round_to_any_caller(tmp_path: Path, capsys) -> None:
    assert_ask_serves_none(tmp_path, {**KNOWN, **NEW}, "staff", capsys)


def test_check_tells_the_author_what_was_withdrawn(tmp_path: Path, capsys) -> None:
    from mrptui.cli import main

    kb, _ = _kb(tmp_path, {"ambiguous": _txt("Group leader: staff"), "spaced": _txt("A C L: hr")})
    assert main(["check", str(kb)]) == 1
    out, err = capsys.readouterr()
    assert "'Group leader' looks like a permission field" in out + err
    assert "'A C L' looks like a permission field" in out + err
