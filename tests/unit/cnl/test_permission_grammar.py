"""Issue 35: the permission-label grammar, driven by its own rules rather than a list of attacks.

Label spellings × every separator Unicode's confusables data (and NFKC) reads as `:` or `=` ×
invisible characters inserted into the name × label positions × formats, each run through the
detector that reader asks (core/cnl/permissions.py, core/cnl/json_keys.py): every case must be
found, as the field it names. A handful go through the readers and the CLI end to end, as an
attacker would: nothing reaches a public caller.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.cnl import read_text
from core.cnl.canonical import (
    _FOLD_FIRST,
    _PROTOTYPE_FIRST,
    _TABLES,
    ASCII_FOLD_FIRST,
    ASCII_PROTOTYPE,
    original_offset,
    prototypes,
)
from core.cnl.json_keys import permission_keys
from core.cnl.permission_inline import labelless, permission_heading, permission_inline
from core.cnl.permission_names import UNAMBIGUOUS, permission_label
from core.cnl.permissions import permission_line, permission_value_start
from core.infra.diagnostics import PERMISSION_CODES
from core.kb.knowledge_base import KnowledgeBase
from core.units import Caller
from mrptui.cli import main
from tests.support.fuzz_settings import bounded

# (spelling, field, unambiguous: counted with no separator and inside prose).
LABELS = [
    ("Acl", "Acl", True),
    ("ACL", "Acl", True),
    ("acls", "Acl", True),
    ("AcI", "Acl", True),
    ("AC1", "Acl", True),
    ("\u0430cl", "Acl", True),
    ("\uff21\uff43\uff4c", "Acl", True),
    ("A.C.L", "Acl", True),
    ("Access-Control-List", "Acl", True),
    ("EffectiveFrom", "EffectiveFrom", True),
    ("effective_from", "EffectiveFrom", True),
    ("\u0415ffectiveFrom", "EffectiveFrom", True),
    ("EffectiveTo", "EffectiveTo", True),
    ("validUntil", "EffectiveTo", True),
    ("Efective-To", "EffectiveTo", True),
    ("Region", "Region", False),
    ("REGIONS", "Region", False),
    ("Regoin", "Region", False),
    ("r\u0435gion", "Region", False),
    ("Effective From", "EffectiveFrom", False),
    ("Audience", "Acl", False),
    ("Visibility", "Acl", False),
    ("Groups", "Acl", False),
    ("Tags", "Acl", False),
    ("Expires", "EffectiveTo", False),
]
INVISIBLE = ["", "\u200b", "\u3164", "\u00ad", "\ufe0f", "\u2060", "\u115f"]
LEADERS = [
    "",
    "  ",
    "- ",
    "* ",
    "+ ",
    "1. ",
    "2) ",
    "> ",
    ">> ",
    "// ",
    "; ",
    "# ",
    "### ",
    "<!-- ",
    "- [ ] ",
    "**",
    "\u2022 ",
]


def _separators() -> list[str]:
    """Every character the library's confusables data or NFKC reads as `:` or `=`, and every sign
    Unicode names as a colon or an equals sign (`≔` COLON EQUALS, which the data pairs with none)."""
    classes = {char for char, proto in prototypes().items() if proto in (":", "=")}
    nfkc = {chr(code) for code in range(0x10000) if unicodedata.normalize("NFKC", chr(code)) in (":", "=")}
    named = {
        chr(code)
        for code in range(0x80, 0x10000)
        if unicodedata.category(chr(code)) in ("Po", "Sm", "Sk")
        and {"COLON", "EQUAL", "EQUALS"} & set(unicodedata.name(chr(code), "").split())
        and not unicodedata.normalize("NFKC", chr(code)).isascii()
    }
    return sorted(classes | nfkc | named)


SEPARATORS = _separators()


def _hidden(name: str, invisible: str) -> str:
    return name[:1] + invisible + name[1:]


def _cases():
    for name, field, unambiguous in LABELS:
        for invisible in INVISIBLE:
            written = _hidden(name, invisible)
            for separator in [*SEPARATORS, *([""] if unambiguous else [])]:
                yield written, field, unambiguous, separator


CASES = list(_cases())


def test_the_suite_is_large_and_uses_every_separator_of_the_data() -> None:
    assert {
        ":",
        "=",
        "\uff1a",
        "\ufe55",
        "\ufe13",
        "\ufe66",
        "\u2236",
        "\ua789",
        "\u0589",
        "\u02d0",
        "\u2254",
        "\u2255",
    } <= set(SEPARATORS)
    positions = len(LEADERS) + 4  # line starts, a JSON key at depth, a SOP token, a heading (and prose)
    assert len(CASES) * positions >= 5000, len(CASES) * positions


def test_every_label_at_every_line_start_is_found() -> None:
    missed = []
    for written, field, _, separator in CASES:
        for leader in LEADERS:
            line = f"{leader}{written}{separator} staff" if separator else f"{leader}{written} staff"
            found = permission_line(line)
            if found is None or found.label != field:
                missed.append(line)
    assert missed == [], f"{len(missed)} missed, e.g. {missed[:5]}"


def test_every_label_as_a_json_key_at_any_depth_a_sop_token_and_in_a_heading_is_found() -> None:
    missed = []
    for written, field, unambiguous, separator in CASES:
        key = written + separator if separator in (":", "=") else written
        nested = {"metadata": {"source": [{"x": {key: ["staff"]}}], "pairs": [[key, "staff"]]}}
        if [label for _, _, label in permission_keys(nested)] != [field, field]:
            missed.append(("json", key))
        if permission_label(key) != field:
            missed.append(("sop token", key))
        if separator:
            heading = f"vault::chunk-000::unit-000 ({written}{separator} staff)"
            if getattr(permission_heading(heading), "label", None) != field:
                missed.append(("heading", heading))
            prose = permission_inline(f"The code is 4471. Note \u2014 {written}{separator} staff")
            if unambiguous and getattr(prose, "label", None) != field:
                missed.append(("prose", written + separator))
    assert missed == [], f"{len(missed)} missed, e.g. {missed[:5]}"


@pytest.mark.parametrize(
    "sentence",
    [
        "The cohorts were grouped into four regions: Finland, Sweden, Norway and Denmark.",
        "Sales are split into two regions: north and south.",
        "Fisheries of the east African great lakes region: revisiting the evidence",
        "Tags: none of the audience expires, they said.",
        "Edit the ACL: add the new user first.",
    ],
)
def test_prose_sentences_stay_readable_in_every_format(sentence: str) -> None:
    texts = {
        "kb.txt": f"The lobby opens at nine.\n\nThe report says more. {sentence}\n",
        "kb.md": f"## Context Unit a::chunk-000::unit-000\nRole: Definition\nTopic: Sales\nClaim: The report says more. {sentence}\n",
        "kb.jsonl": json.dumps({"_id": "d1", "title": sentence, "text": f"The report says more. {sentence}"}) + "\n",
    }
    for file, text in texts.items():
        units, diagnostics = read_text(text, file)
        assert units and not [d for d in diagnostics if d.code in PERMISSION_CODES], (
            file,
            [d.format() for d in diagnostics],
        )


def test_the_ascii_fast_path_is_the_librarys_table() -> None:
    for code in range(32, 127):
        char = chr(code)
        assert char.casefold().translate(ASCII_FOLD_FIRST) == char.translate(_FOLD_FIRST), char
        assert char.translate(ASCII_PROTOTYPE).casefold().translate(ASCII_PROTOTYPE) == char.translate(
            _PROTOTYPE_FIRST
        ), char


# Characters a form drops (`\u200b`), widens (`\ufb01` ﬁ, `\u2474` ⑵) or keeps, so a label's place in
# a form and in the text written part ways in both directions.
_OFFSET_TEXT = st.lists(
    st.sampled_from(
        ["a", "C", "I", ":", " ", "\u200b", "\u3164", "\ufb01", "\u2474", "\uff21", "\u0430", "\u200b" * 40]
    )
).map("".join)


@bounded(300)
@given(_OFFSET_TEXT, st.integers(0, 200), st.integers(0, 2))
def test_original_offset_finds_the_character_a_forms_offset_comes_from(text: str, offset: int, form: int) -> None:
    # By its definition, one character at a time: the text's first character whose form, with
    # the forms of those before it, reaches past `offset` (long runs of dropped characters reach
    # past the prefix `original_offset` sums first). An offset is one inside the form or its end.
    offset = min(offset, len(text.translate(_TABLES[form])))
    seen, expected = 0, len(text)
    for index, char in enumerate(text):
        seen += len(char.translate(_TABLES[form]))
        if seen > offset:
            expected = index
            break
    assert original_offset(text, offset, form) == expected


def test_unambiguous_names_are_not_english_words_a_sentence_starts_with() -> None:
    assert not {"region", "regions", "tags", "audience", "expires", "access", "allowed"} & set(UNAMBIGUOUS)


# --- end to end, as an attacker would: the cases through the CLI ------------------------

PUBLIC = "## Context Unit lobby::chunk-000::unit-000\nRole: Definition\nTopic: Lobby\nClaim: The lobby opens at nine.\n"
SECRET = "The vault code is zqx4471."
ATTACKS = {
    "fullwidth colon after a rule.md": f"{PUBLIC}\n---\nAcl\uff1a staff\n## Context Unit v::chunk-000::unit-000\nRole: Definition\nTopic: Vault\nClaim: {SECRET}\n",
    "hangul filler front matter.md": f"---\nA\u3164cl: staff\n---\n## Context Unit v::chunk-000::unit-000\nRole: Definition\nTopic: Vault\nClaim: {SECRET}\n",
    "heading.md": f"## Context Unit v::chunk-000::unit-000 (Acl: staff)\nRole: Definition\nTopic: Vault\nClaim: {SECRET}\n",
    "bullet statement.cnl": f'@k1 ku atomic "v::chunk-000::unit-000"\nset $k1 role Definition\nset $k1 topic "Vault"\nset $k1 claim "{SECRET}"\n- set $k1 acl [staff]\n',
    "todo statement.cnl": f'@k1 ku atomic "v::chunk-000::unit-000"\nset $k1 role Definition\nset $k1 topic "Vault"\nset $k1 claim "{SECRET}"\nTODO set $k1 acl [staff]\n',
    "duplicate keys.jsonl": '{"_id": "v", "title": "Vault", "text": "'
    + SECRET
    + '", "effectiveFrom": "2099-01-01", "effectiveFrom": "2020-01-01"}\n',
    "nested key.jsonl": '{"_id": "v", "title": "Vault", "text": "'
    + SECRET
    + '", "metadata": {"source": {"acl": ["staff"]}}}\n',
    "pairs.jsonl": '{"_id": "v", "title": "Vault", "text": "' + SECRET + '", "metadata": [["acl", "staff"]]}\n',
    "unix date.md": f"## Context Unit v::chunk-000::unit-000\nRole: Definition\nTopic: Vault\nClaim: {SECRET}\nEffectiveFrom: 0\nEffectiveTo: 1\n",
    "synonym.txt": f"Audience: staff\n{SECRET}\n",
    "no separator.txt": f"Acl staff\n{SECRET}\n",
}


@pytest.mark.parametrize("name", ATTACKS)
def test_no_attack_reaches_a_public_caller_through_the_cli(name: str, tmp_path: Path, capsys) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "lobby.md").write_text(PUBLIC)
    suffix = name.rsplit(".", 1)[1]
    (kb / f"attack.{suffix}").write_text(ATTACKS[name])
    kb_arg = [str(kb / f"attack.{suffix}")] if suffix == "jsonl" else [str(kb)]
    kb_flags = [flag for path in kb_arg for flag in ("--kb", path)]
    main(["--no-cache", "retrieve", "vault code", *kb_flags, "--json"])
    main(["--no-cache", "ask", "What is the vault code?", *kb_flags, "--json"])
    out = capsys.readouterr().out
    assert "zqx4471" not in out
    units, diagnostics = read_text(ATTACKS[name], f"attack.{suffix}")
    assert not any("zqx4471" in u.body for u in KnowledgeBase.from_units(units, diagnostics).view(Caller()).units)
    assert any(d.is_error for d in diagnostics), name


@pytest.mark.parametrize("mark", ["\u1361", "\u1365", "\u00b7", "\u0703", "\u2e35"])
def test_a_scripts_own_punctuation_after_a_field_name_is_a_separator(mark: str) -> None:
    # Marks confusables.txt pairs with nothing ASCII (ETHIOPIC WORDSPACE, ETHIOPIC COLON, MIDDLE DOT,
    # SYRIAC SUPRALINEAR COLON, TURNED SEMICOLON): after a field name at a label position they
    # separate it from its value, so the unit is withdrawn rather than served (fail closed).
    for leader in ("", "- ", "> "):
        found = permission_line(f"{leader}Region{mark} EU")
        assert found is not None and found.label == "Region", (leader, mark)


# Text built from the pieces labels are made of: names, separators weak and strong, markup,
# sentence ends, dates, digits, and plain words.
_PIECES = st.sampled_from(
    [
        "Acl", "acl", "Region", "region", "EffectiveTo", "Expires", "valid until", "Not after", "Audience",
        "public", "embargo", ":", "=", "=>", " - ", " -- ", "->", "|", "\t", "&#58;", "<b>", "*", "~",
        ". ", "! ", "? ", "2020-01-01", "4471", "1)", " ", "staff", "EU", "the", "vault", "opens", "al", "va",
    ]
)  # fmt: skip


@bounded(400)
@given(st.lists(_PIECES, max_size=12).map("".join))
def test_a_value_called_labelless_holds_no_label_either_reader_finds(text):
    # The Markdown fast path skips both readers for such a value: a wrong "labelless" publishes it.
    if labelless(text):
        assert permission_inline(text) is None and permission_value_start(text) is None


def test_labelless_passes_plain_values_and_sends_every_separator_to_the_readers():
    assert labelless("The harbour buoy marks the shoal") and labelless("duta luzodora vivumi")
    for text in ["x Acl: staff", "Region = EU", "Acl - staff", "Acl\tstaff", "Acl&#58; staff",
                 "Expires 2020-01-01", "The code is 4471. Acl staff", "Région: EU", "x Acl&#58; staff", "Region\uff1a EU", "Region - EU", "Region\tEU",
                 "Region | EU", "Region => EU", "The code is 4471. Region - EU", "Note <b>Acl</b>: staff"]:  # fmt: skip
        assert not labelless(text), text
        assert permission_inline(text) or permission_value_start(text), text  # each is a label
