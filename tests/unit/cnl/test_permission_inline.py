"""Every reader × every way of writing a permission field inside a line: the unit is withdrawn with
an error at the file, line and column of the field's name, and prose that only mentions a
permission word still reads.

Plain text withdrew a paragraph holding `Note — acl: staff` since the last session; Markdown field
values, Markdown prose between units, SOP strings and comments, and JSON Lines texts published the
unit with the restriction ignored. The table below runs each form through each place.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from core.cnl import read_text
from core.infra.diagnostics import PERMISSION_CODES
from core.kb.knowledge_base import KnowledgeBase
from core.kernel.session import Session
from core.units import Caller

SECRET = "The vault combination is 4471."
LOBBY = "The lobby opens at nine."
# (form, the name as written): a permission field written inside a line, as authors do.
FORMS = [
    ("Note — acl: staff", "acl"),
    ("(Region=EU)", "Region"),
    ("EffectiveTo: 2000-01-01", "EffectiveTo"),
    ("Effective From: 2099-01-01", "Effective From"),
    ("[ACL: vault-team]", "ACL"),
    ("staff only, \u0430cl: staff", "\u0430cl"),  # Cyrillic а
    ("regions = EU, US", "regions"),
    ("ACLs:staff", "ACLs"),
]
# Prose that names a permission word without writing a field: read as before, no diagnostic.
PROSE = [
    "He described the region: dry, hot and sparse.",
    "Sales by region: north rose by five percent.",
    "Open https://example.org/?region=eu for the map.",
    "Edit the ACL: add the new user first.",
]


def _md_unit(unit_id: str, claim: str, extra: str = "") -> str:
    return f"## Context Unit {unit_id}\nRole: Definition\nTopic: Vault\nClaim: {claim}\n{extra}"


def _sop(claim: str, comment: str = "", items: str = "") -> str:
    lines = [
        '@d1 ku atomic "lobby::chunk-000::unit-000"',
        "set $d1 role Definition",
        'set $d1 topic "Lobby"',
        f'set $d1 claim "{LOBBY}"',
        '@k1 ku atomic "vault::chunk-000::unit-000"',
        "set $k1 role Definition",
        'set $k1 topic "Vault"',
        f'set $k1 claim "{claim}"',
    ]
    if items:
        lines.append(f'set $k1 phaseScopes ["{items}"]')
    if comment:
        lines.insert(4, comment)
    return "\n".join(lines) + "\n"


def _jsonl(key: str, form: str) -> str:
    record = {"_id": "vault", "title": "Vault", "text": SECRET, "role": "Definition"}
    record[key] = f"{record[key]} {form}"
    return (
        json.dumps({"_id": "lobby", "title": "Lobby", "text": LOBBY})
        + "\n"
        + json.dumps(record, ensure_ascii=False)
        + "\n"
    )


PUBLIC_MD = _md_unit("lobby::chunk-000::unit-000", LOBBY)
# Where a form is written: (file name, text with the form, whether the public unit survives).
# A place that could restrict any unit of the file (front matter, a SOP comment) withdraws them all.
PLACES: dict[str, tuple[str, Callable[[str], str], bool]] = {
    "markdown claim": (
        "kb.md",
        lambda f: PUBLIC_MD + "\n" + _md_unit("vault::chunk-000::unit-000", f"{SECRET} {f}"),
        True,
    ),
    "markdown topic": (
        "kb.md",
        lambda f: (
            PUBLIC_MD
            + "\n"
            + _md_unit("vault::chunk-000::unit-000", SECRET).replace("Topic: Vault", f"Topic: Vault {f}")
        ),
        True,
    ),
    "markdown continuation": (
        "kb.md",
        lambda f: PUBLIC_MD + "\n" + _md_unit("vault::chunk-000::unit-000", SECRET, f"  and more. {f}\n"),
        True,
    ),
    "markdown condition": (
        "kb.md",
        lambda f: PUBLIC_MD + "\n" + _md_unit("vault::chunk-000::unit-000", SECRET, f"Condition: weekdays {f}\n"),
        True,
    ),
    "markdown prose after the unit": (
        "kb.md",
        lambda f: _md_unit("vault::chunk-000::unit-000", SECRET) + f"\n---\n\nWho may read it: {f}\n\n" + PUBLIC_MD,
        False,
    ),
    "markdown front matter": (
        "kb.md",
        lambda f: (
            f"# Vault notes\n\nThis file: {f}\n\n" + _md_unit("vault::chunk-000::unit-000", SECRET) + "\n" + PUBLIC_MD
        ),
        False,
    ),
    "sop claim string": ("kb.cnl", lambda f: _sop(f"{SECRET} {f}"), True),
    "sop list item": ("kb.cnl", lambda f: _sop(SECRET, items=f"night {f}"), True),
    "jsonl text": ("kb.jsonl", lambda f: _jsonl("text", f), True),
    "jsonl title": ("kb.jsonl", lambda f: _jsonl("title", f), True),
    "plain text": ("notes.txt", lambda f: f"{LOBBY}\n\n{SECRET} {f}\n", True),
    "prose markdown": ("notes.md", lambda f: f"{LOBBY}\n\n{SECRET} {f}\n", True),
}


def _public(text: str, file: str) -> tuple[list[str], list]:
    units, diagnostics = read_text(text, file)
    return [u.body for u in KnowledgeBase.from_units(units, diagnostics).view(Caller()).units], diagnostics


@pytest.mark.parametrize("form, name", FORMS, ids=[f for f, _ in FORMS])
@pytest.mark.parametrize("place", PLACES)
def test_a_permission_field_inside_a_line_withdraws_the_unit_in_every_reader(place: str, form: str, name: str) -> None:
    file, write, lobby_stays = PLACES[place]
    text = write(form)
    bodies, diagnostics = _public(text, file)
    assert not any("4471" in body for body in bodies), f"{place}: {form!r} published the unit"
    assert (LOBBY in bodies) is lobby_stays, bodies
    errors = [d for d in diagnostics if d.is_error and d.code in PERMISSION_CODES and d.author_only]
    assert errors, f"{place}: {form!r} withdrew nothing with an error: {[d.format() for d in diagnostics]}"
    # file:line:col names the field as written, in the line the author wrote it on.
    lines = text.split("\n")
    assert any(d.file == file and lines[d.line - 1][d.col - 1 :].startswith(name) for d in errors), (
        [d.format() for d in errors],
        name,
    )


@pytest.mark.parametrize("prose", PROSE)
@pytest.mark.parametrize("place", [p for p in PLACES if PLACES[p][2]])
def test_prose_that_mentions_a_permission_word_still_reads_in_every_reader(place: str, prose: str) -> None:
    file, write, _ = PLACES[place]
    text = write(prose.replace('"', "'"))
    units, diagnostics = read_text(text, file)
    assert len(units) == 2 and diagnostics == [], [d.format() for d in diagnostics]


@pytest.mark.parametrize(
    "comment", ["# Acl: staff", "#   - Region = EU", "# Effective To: 2000-01-01", "# ACLs: staff"]
)
def test_a_sop_comment_written_as_a_permission_field_withdraws_the_file(comment: str) -> None:
    bodies, diagnostics = _public(_sop(SECRET, comment=comment), "kb.cnl")
    assert bodies == []
    [error] = [d for d in diagnostics if d.is_error]
    assert error.line == 5 and error.author_only and "every unit of this file is withdrawn" in error.message


@pytest.mark.parametrize(
    "comment",
    [
        "# Region-only unit: no acl, so any caller whose region is EU may see it.",
        "# (effectiveFrom <= as-of date <= effectiveTo). Rule codes: RPL-14.",
        "# Public articles. No acl and no region: every caller sees them.",
        "# set $k1 acl [staff]",
    ],
)
def test_a_sop_comment_about_permissions_is_prose(comment: str) -> None:
    units, diagnostics = read_text(_sop(SECRET, comment=comment), "kb.cnl")
    assert len(units) == 2 and diagnostics == []


def test_an_edit_that_writes_a_permission_into_a_claim_is_withdrawn_on_reload(tmp_path: Path, monkeypatch) -> None:
    """Through the index store's block re-read of an edited Markdown file, and its preamble rule."""
    monkeypatch.setenv("MRPTUI_CACHE_DIR", str(tmp_path / "cache"))
    kb = tmp_path / "kb"
    kb.mkdir()
    file = kb / "vault.md"
    plain = PUBLIC_MD + "\n" + _md_unit("vault::chunk-000::unit-000", SECRET)
    file.write_text(plain)
    session = Session.open([kb])
    assert len(session.units(Caller())) == 2
    for edited in (plain.replace(SECRET, f"{SECRET} (Region=EU)"), "Staff only — acl: staff\n\n" + plain):
        file.write_text(edited)
        session.reload()
        assert not any("4471" in u.body for u in session.units(Caller())), edited
        assert any(d.is_error and d.code in PERMISSION_CODES for d in session.kb.diagnostics)
        file.write_text(plain)
        session.reload()
        assert len(session.units(Caller())) == 2
