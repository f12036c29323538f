"""Red-team round on the permission-label grammar (docs/security.md, "The permission-label grammar"):
one case per class of disguise that reached a public caller before, in every format it was found
in, and the public prose each rule must leave alone. Every attack withdraws the unit for every
caller (public or holding the tags) with an author-only error at the label's line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cnl import read_text
from core.infra.diagnostics import PERMISSION_CODES
from core.kb.knowledge_base import KnowledgeBase
from core.units import Caller

SECRET = "The vault combination is 4471."
OPEN_TEXT = "The lobby opens at nine."
CALLERS = (Caller(), Caller(tags=frozenset({"staff"}), region="EU"))


def _md(extra: str = "", claim_tail: str = "") -> str:
    return (
        "## Context Unit vault::chunk-000::unit-000\nRole: Definition\nTopic: Vault combination\n"
        f"Claim: {SECRET}{claim_tail}\n{extra}"
    )


def _sop(extra: str) -> str:
    return (
        '@k1 ku atomic "vault::chunk-000::unit-000"\nset $k1 role Definition\n'
        f'set $k1 topic "Vault combination"\nset $k1 claim "{SECRET}"\n{extra}'
    )


def _jsonl(**fields: object) -> str:
    return json.dumps({"_id": "vault", "title": "Vault combination", "text": SECRET, **fields}) + "\n"


def _txt(extra: str, before: str = "") -> str:
    return f"{before}{SECRET}\n{extra}"


ATTACKS = {
    # The Markdown fast path asked about a label in a value only when it held an ASCII `:` or `=`.
    "fast path, look-alike colon": ("kb.md", _md(claim_tail=" Acl\uff1a staff")),
    "fast path, ratio sign": ("kb.md", _md(claim_tail=" Acl \u2236 staff")),
    # Dashes, arrows, bars and tabs used as separators.
    "bullet, em dash": ("kb.md", _md("- Audience \u2014 staff\n")),
    "claim, arrow": ("kb.md", _md(claim_tail=" Acl -> staff")),
    "claim, em dash": ("kb.md", _md(claim_tail=" Acl \u2014 staff")),
    "text line, hyphen": ("notes.txt", _txt("Region - EU\n")),
    "text line, bar": ("notes.txt", _txt("Region | EU\n")),
    "text line, tab": ("notes.txt", _txt("Region\tEU\n")),
    "jsonl text, tab": ("kb.jsonl", _jsonl(text=f"{SECRET}\tAcl\tstaff")),
    # A date field's name and a date, no separator, in other date formats.
    "dated, ISO": ("notes.txt", _txt("Expires 2020-01-01\n")),
    "dated, day first": ("notes.txt", _txt("Valid until 31/12/2020\n")),
    "dated, month name": ("notes.txt", _txt("Not after Dec 31, 2020\n")),
    "dated, after a sentence": ("kb.md", _md(claim_tail=" Expires on 2020-01-01")),
    # A quoted key in running text is a JSON object's key, and JSON text inside a value.
    "claim, JSON text": ("kb.md", _md().replace(f"Claim: {SECRET}", f'Claim: {{"text": "{SECRET}", "region": "EU"}}')),
    "jsonl text, JSON text": ("kb.jsonl", _jsonl(text=json.dumps({"text": SECRET, "acl": ["staff"]}))),
    "jsonl metadata, JSON text": ("kb.jsonl", _jsonl(metadata=json.dumps({"acl": "staff"}))),
    "jsonl metadata, key-value object": ("kb.jsonl", _jsonl(metadata={"key": "acl", "value": "staff"})),
    "jsonl metadata, label string": ("kb.jsonl", _jsonl(metadata={"note": "Region: EU"})),
    "jsonl text, label line": ("kb.jsonl", _jsonl(text=f"{SECRET}\nRegion: EU")),
    "sop condition, JSON text": ("kb.cnl", _sop('set $k1 condition "{\\"acl\\": \\"staff\\"}"\n')),
    # An HTML comment opens a label position inside a line.
    "claim, HTML comment": ("kb.md", _md(claim_tail=" <!-- Region: EU -->")),
    # A label split over two lines.
    "claim, value on the next line": ("kb.md", _md(claim_tail=" Acl:\n  staff")),
    "claim, name over two lines": ("kb.md", _md(claim_tail=" Effective\n  To: 2020-01-01")),
    "text, separator on the next line": ("notes.txt", _txt("Acl\n: staff\n")),
    # After a leading token, or as the last "sentence" of a text.
    "text, leading token, own paragraph": ("notes.txt", _txt("\nNote: Region: EU\n")),
    "text, leading word and dash": ("notes.txt", _txt("\nInternal note \u2014 Region: EU\n")),
    "text, leading word, dated": ("notes.txt", _txt("\nFYI Expires: 2020-01-01\n")),
    "claim, closing sentence": ("kb.md", _md(claim_tail=" Region - EU")),
    "claim, closing sentence after a token": ("kb.md", _md(claim_tail=" Note: Audience \u2014 staff")),
    # An English field name before a look-alike colon: no sentence writes one.
    "claim, English name, ratio sign": ("kb.md", _md(claim_tail=" Region\u2236 EU")),
    # Letters a reader reads as the label's.
    "combining mark": ("notes.txt", _txt("A\u0301cl: staff\n")),
    "decomposed accent": ("notes.txt", _txt("Re\u0301gion: EU\n")),
    "small capitals": ("notes.txt", _txt("\u1d00\u1d04\u029f: staff\n")),
    "circled letters": ("notes.txt", _txt("\u24b6\u24b8\u24c1: staff\n")),
    "braille blank inside": ("notes.txt", _txt("A\u2800cl: staff\n")),
    # Shown right to left: the stored text is reversed, the screen shows `Acl: staff`.
    "right-to-left override, text": ("notes.txt", _txt("\u202effats :lcA\n")),
    "right-to-left override, SOP line": ("kb.cnl", _sop("\u202effats :lcA\n")),
    # Each word after an id starts a label position: a heading or id is no sentence.
    "heading, dash": ("kb.md", _md().replace("unit-000\n", "unit-000 (Region - EU)\n", 1)),
    "heading, bare name": ("kb.md", _md().replace("unit-000\n", "unit-000 Acl staff\n", 1)),
    "heading, dated": ("kb.md", _md().replace("unit-000\n", "unit-000 Expires 2020-01-01\n", 1)),
    "SOP id, dash": ("kb.cnl", _sop("").replace('unit-000"', 'unit-000 Region - EU"', 1)),
    "jsonl id, dash": ("kb.jsonl", _jsonl().replace('"vault"', '"vault Region - EU"')),
    # A table row written in a value, and an explicit list's item.
    "topic, table cells": ("kb.md", _md().replace("Topic: Vault combination", "Topic: Vault | Region | EU")),
    "SOP list item": ("kb.cnl", _sop('set $k1 phaseScopes ["Region - EU"]\n')),
    # An FAQ answer's `A:` is a leading token, not the article.
    "text, FAQ answer": ("notes.txt", _txt("\nQ: Who may read this?\nA: Acl - staff\n")),
    # A value's start is after a leading token: the field's name.
    "field value, label": ("kb.md", _md("Condition: Region: EU\n")),
    "jsonl title, label": ("kb.jsonl", _jsonl(title="Region: EU")),
    # Markup a renderer shows as a label: character references, tags, emphasis inside a word.
    "character reference": ("kb.md", _md(claim_tail=" Acl&#58; staff")),
    "character reference, line": ("notes.txt", _txt("Region&#x3A; EU\n")),
    "tags around the name": ("notes.txt", _txt("<b>Acl</b>: staff\n")),
    "tag around the separator": ("notes.txt", _txt("Region<sup>:</sup> EU\n")),
    "emphasis inside the name": ("notes.txt", _txt("*Re*gion: EU\n")),
    "HTML attribute": ("kb.md", _md(claim_tail=' <span data-acl="staff"></span>')),
    # HTML's name/value attribute pairs: `<meta name=… content=…>` means the field `name` is `content`.
    "HTML meta pair": ("kb.md", _md(claim_tail=' <meta name="region" content="EU">')),
    "HTML meta pair, single quotes, line": ("notes.txt", _txt("<meta name='acl' content='staff'>\n")),
    "HTML meta pair, content first": ("kb.md", _md('<meta content="staff" name="Acl">\n')),
    "HTML param pair, unquoted": ("kb.jsonl", _jsonl(text=f"{SECRET} <param name=region value=EU>")),
    "SOP claim, HTML property pair": (
        "kb.cnl",
        _sop("").replace(f'claim "{SECRET}"', f"claim \"{SECRET} <meta property='acl' content='staff'>\""),
    ),
    # A compound key with a label as one part, and a JSON-escaped key.
    "jsonl metadata, compound key": ("kb.jsonl", _jsonl(metadata={"x-acl": "staff"})),
    "jsonl metadata, camel-case key": ("kb.jsonl", _jsonl(metadata={"docRegion": "EU"})),
    "claim, escaped JSON key": (
        "kb.md",
        _md().replace(f"Claim: {SECRET}", f'Claim: {{"text": "{SECRET}", "\\u0061cl": "staff"}}'),
    ),
    # SOP: a label after a word in a comment, and a string alone on a line.
    "SOP comment, after a word": ("kb.cnl", _sop("# note: acl: staff\n")),
    "SOP string line": ("kb.cnl", _sop('"acl: staff"\n')),
}


@pytest.mark.parametrize(("file", "text"), ATTACKS.values(), ids=ATTACKS.keys())
def test_a_disguised_label_withdraws_its_unit_for_every_caller(file: str, text: str) -> None:
    units, diagnostics = read_text(text, file)
    kb = KnowledgeBase.from_units(units, diagnostics)
    for caller in CALLERS:
        assert not any("4471" in unit.body for unit in kb.view(caller).units), caller
    errors = [d for d in diagnostics if d.is_error]
    assert errors and all(d.author_only for d in diagnostics) and all(d.file == file and d.line >= 1 for d in errors)


PROSE = [
    "Access: the north gate was the only way in.",
    "Access: the north gate",
    "Expiry: the milk went off on Tuesday.",
    "Readers: you will enjoy this chapter.",
    "He tore his ACL - the season was over.",
    "Roles - heroes and villains alike",
    "Tags - see the appendix",
    "Effective 1 July 2021 the law changed.",
    "Published 2020-01-01 by the press.",
    "The villages were grouped into four regions: Finland, Sweden, Norway and Denmark.",
    "Sales are split into two regions: north and south. The north grew.",
    "Note: the region: north of the river",
    "Valid until the end of the season, the pass was cheap.",
    '<meta name="description" content="The lobby and its opening hours">',
]


@pytest.mark.parametrize("line", PROSE)
def test_public_prose_that_looks_like_a_label_stays_public(line: str) -> None:
    units, diagnostics = read_text(f"{OPEN_TEXT}\n\n{line}\n", "story.txt")
    assert diagnostics == [] and units


@pytest.mark.parametrize(
    ("file", "text"),
    [
        ("kb.cnl", _sop("# Units with acl support:eu need that tag. The last unit has a Region but no Acl:\n")),
        ("kb.cnl", _sop("# Public articles. No acl and no region: every caller,\n")),
        ("notes.md", f"# Notes\n\n{OPEN_TEXT} Units with neither `Acl` nor `Region`: `help-centre.cnl`.\n"),
    ],
)
def test_text_that_names_the_fields_in_a_sentence_stays(file: str, text: str) -> None:
    units, diagnostics = read_text(text, file)
    assert units and not [d for d in diagnostics if d.code in PERMISSION_CODES]


def test_ask_serves_no_disguised_unit_to_any_caller(tmp_path: Path, capsys) -> None:
    from mrptui.cli import main

    kb = tmp_path / "kb"
    kb.mkdir()
    files = {"kb.md": "md", "notes.txt": "txt", "kb.cnl": "cnl"}
    for number, (file, text) in enumerate(ATTACKS.values()):
        if file in files:
            (kb / f"attack-{number:02d}.{files[file]}").write_text(text.replace("vault::", f"vault{number}::"))
    jsonl = tmp_path / "attacks.jsonl"
    jsonl.write_text(
        "".join(
            text.replace('"_id": "vault"', f'"_id": "vault{number}"')
            for number, (file, text) in enumerate(ATTACKS.values())
            if file == "kb.jsonl"
        )
    )
    (kb / "lobby.md").write_text(
        "## Context Unit lobby::chunk-000::unit-000\nRole: Definition\nTopic: Vault\nClaim: The vault is steel.\n"
    )
    for flags in ([], ["--caller-tags", "staff", "--region", "EU", "--as-of", "2019-06-01"]):
        for output in ([], ["--json"]):
            args = ["ask", "--kb", str(kb), "--kb", str(jsonl), *flags, *output, "What is the vault combination?"]
            assert main(args) in (0, 1)
            out, err = capsys.readouterr()
            assert "4471" not in out + err
