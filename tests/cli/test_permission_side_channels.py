"""Issue 23, leak 5: a public caller's output does not change, not by one count or character,
when a restricted unit is added, broken, duplicated or cached; the whole-KB counts are on
author surfaces (`check`, `Session.health()` without a caller, `eval --author-view`)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from core.kernel.session import Session
from core.units import Caller
from mrptui.cli import main

PUBLIC = """## Context Unit lobby::chunk-000::unit-000
Role: Definition
Topic: Lobby hours
Claim: The lobby opens at nine and closes at six.

## Context Unit lobby::chunk-000::unit-001
Role: Definition
Topic: Lobby desk
Claim: The lobby desk lends umbrellas.
"""
STAFF = """## Context Unit vault::chunk-000::unit-000
Role: Definition
Topic: Vault combination
Claim: The vault combination for the lobby safe is 4471.
Acl: staff
"""
MIXED = PUBLIC.replace("lobby::", "hall::").replace("Lobby", "Hall") + "\n" + STAFF.replace("vault::", "hallvault::")
QUESTION = "When does the lobby open?"


def _kb(folder: Path) -> Path:
    folder.mkdir()
    (folder / "public.md").write_text(PUBLIC)
    (folder / "staff.md").write_text(STAFF)
    (folder / "mixed.md").write_text(MIXED)
    return folder


def _append(name: str, text: str) -> Callable[[Path], None]:
    return lambda kb: (
        (kb / name).write_text((kb / name).read_text() + text) if (kb / name).exists() else (kb / name).write_text(text)
    )


def _replace(name: str, old: str, new: str) -> Callable[[Path], None]:
    def edit(kb: Path) -> None:
        text = (kb / name).read_text()
        assert old in text
        (kb / name).write_text(text.replace(old, new))

    return edit


def _bad_byte(kb: Path) -> None:
    (kb / "staff.md").write_bytes((kb / "staff.md").read_bytes().replace(b"4471", b"44\xff71"))


EDITS: dict[str, Callable[[Path], None]] = {
    "add a restricted unit to a mixed file": _append(
        "mixed.md", "\n" + STAFF.replace("vault::chunk-000", "vault::chunk-009")
    ),
    "add a restricted-only file": _append("more.md", STAFF.replace("vault::", "more::")),
    "add a broken restricted-only file": _append(
        "broken.md", STAFF.replace("vault::", "broken::").replace("Definition", "Definitoin")
    ),
    "break a restricted unit's role": _replace("staff.md", "Role: Definition", "Role: Definitoin"),
    "break a restricted unit's date in a mixed file": _replace(
        "mixed.md", "Acl: staff", "Acl: staff\nEffectiveTo: 2026-13-01"
    ),
    "a look-alike line after a restricted unit": _append("staff.md", "---\n- Region: EU\n"),
    "a tag no caller can hold": _replace("staff.md", "Acl: staff", "Acl: staff team"),
    "a restricted unit repeats a public id": _append(
        "staff.md", "\n" + STAFF.replace("vault::chunk-000::unit-000", "lobby::chunk-000::unit-001")
    ),
    "a restricted unit in an earlier file repeats a public id": _append(
        "a-first.md", STAFF.replace("vault::chunk-000::unit-000", "lobby::chunk-000::unit-000")
    ),
    "a restricted unit with a bad id": _append(
        "staff.md", "\n" + STAFF.replace("vault::chunk-000::unit-000", "vault-7")
    ),
    "an undecodable byte in a restricted-only file": _bad_byte,
    "a broken sop statement on a restricted unit": _append(
        "staff.cnl",
        '@k1 ku atomic "s::chunk-000::unit-000"\nset $k1 role Definition\nset $k1 topic "Safe"\nset $k1 claim "Code 9"\nset $k2 acl [staff]\n',
    ),
    "a broken jsonl-like front matter": _append(
        "front.md", "---\nacl: staff\n---\n" + STAFF.replace("vault::", "front::")
    ),
}

VALID_EDITS = {"add a restricted unit to a mixed file", "add a restricted-only file"}


def _ask(kb: Path, capsys, *flags: str, command: str = "ask") -> tuple[int, str, str]:
    code = main([command, "--kb", str(kb), *flags, QUESTION])
    out, err = capsys.readouterr()
    if "--json" in flags:
        out = json.dumps(_untimed(json.loads(out)), indent=1)
    return code, out, err


def _outputs(kb: Path, capsys) -> list[tuple[int, str, str]]:
    return [
        _ask(kb, capsys),
        _ask(kb, capsys, "--json"),
        _ask(kb, capsys, "--json", "--caller-tags", "outsider"),
        _ask(kb, capsys, "--json", command="retrieve"),
    ]


def _untimed(data: object) -> object:
    """The output without its timings: they differ from run to run; nothing else may."""
    if isinstance(data, dict):
        return {key: _untimed(value) for key, value in data.items() if key not in ("ms", "timings_ms")}
    return [_untimed(item) for item in data] if isinstance(data, list) else data


def test_the_baseline_warns_about_nothing_and_answers_from_the_public_units(tmp_path: Path, capsys) -> None:
    code, out, err = _ask(_kb(tmp_path / "kb"), capsys)
    assert code == 0 and "nine" in out and err == ""


@pytest.mark.parametrize("edit", list(EDITS), ids=list(EDITS))
def test_a_public_callers_ask_output_does_not_change(edit: str, tmp_path: Path, capsys) -> None:
    kb = _kb(tmp_path / "kb")
    before = _outputs(kb, capsys)
    edited = tmp_path / "edited"
    shutil.copytree(kb, edited)
    shutil.rmtree(kb)
    EDITS[edit](edited)
    edited.rename(kb)  # the same path: the output names none of the KB's files by another
    after = _outputs(kb, capsys)
    assert after == before
    if edit not in VALID_EDITS:  # the author still hears about it
        author = Session.open([kb]).health()
        assert author.errors + author.warnings > 0


def test_json_diagnostics_count_what_the_caller_sees(tmp_path: Path, capsys) -> None:
    kb = _kb(tmp_path / "kb")
    EDITS["break a restricted unit's role"](kb)
    (kb / "public.md").write_text(PUBLIC.replace("Role: Definition", "Role: Definitoin", 1))
    _, out, err = _ask(kb, capsys, "--json")
    assert json.loads(out)["diagnostics"]["kb_errors"] == 1 and "1 KB error" in err
    _, staff_out, _ = _ask(kb, capsys, "--json", "--caller-tags", "staff")
    # Staff see the vault's file, but its broken unit wrote an Acl: its error is the author's.
    assert json.loads(staff_out)["diagnostics"]["kb_errors"] == 1
    assert Session.open([kb]).health().kb_errors == 2


def test_a_reload_that_withdraws_a_restricted_unit_is_not_counted_for_the_public(tmp_path: Path) -> None:
    kb = _kb(tmp_path / "kb")
    session = Session.open([kb])
    before = session.health(Caller())
    EDITS["break a restricted unit's role"](kb)
    session.reload()
    assert session.health(Caller()) == before
    author = session.health()
    assert author.files_withdrawn == 1 and author.kb_errors == 1
    assert session.health(Caller(tags={"staff"})).files_withdrawn == 0


def test_a_withdrawn_public_unit_is_counted_for_everyone(tmp_path: Path) -> None:
    kb = _kb(tmp_path / "kb")
    session = Session.open([kb])
    _replace("public.md", "Role: Definition", "Role: Definitoin")(kb)
    session.reload()
    public = session.health(Caller())
    assert public.files_withdrawn == 1 and public.kb_errors > 0 and public == session.health()


def test_a_cache_note_about_a_restricted_only_file_is_not_shown_to_the_public(tmp_path: Path, capsys) -> None:
    kb, cache = _kb(tmp_path / "kb"), tmp_path / "cache"
    arguments = ["--cache-dir", str(cache), "--kb", str(kb), "ask", "--json", QUESTION]
    assert main(arguments) == 0
    capsys.readouterr()
    meta = [path for path in cache.glob("segments/*/*/meta.json") if "staff.md" in path.read_text()]
    units = meta[0].parent / "units.jsonl"
    units.write_bytes(units.read_bytes()[:-20])  # its checksum no longer matches: rebuilt, with a note
    assert main(arguments) == 0
    out, err = capsys.readouterr()
    assert "staff.md" not in out + err and json.loads(out)["diagnostics"]["cache_notes"] == []
    units.write_bytes(units.read_bytes()[:-20])
    assert main([*arguments, "--caller-tags", "staff"]) == 0
    out, err = capsys.readouterr()  # staff see the vault's file: they are told
    assert "staff.md" in err and "unusable" in json.loads(out)["diagnostics"]["cache_notes"][0]


def test_eval_counts_for_the_public_caller_unless_the_author_asks(tmp_path: Path, capsys) -> None:
    kb = _kb(tmp_path / "kb")
    EDITS["break a restricted unit's role"](kb)
    queries = tmp_path / "queries.json"
    queries.write_text(
        json.dumps(
            [
                {
                    "id": "q1",
                    "question": QUESTION,
                    "expect_evidence": ["lobby::chunk-000::unit-000"],
                    "must_not_appear": [],
                    "kind": "definition",
                }
            ]
        )
    )
    main(["eval", "--kb", str(kb), "--json", str(queries)])
    public, err = capsys.readouterr()
    assert json.loads(public)["diagnostics"]["kb_errors"] == 0 and "KB error" not in err
    main(["eval", "--kb", str(kb), "--json", "--author-view", str(queries)])
    assert json.loads(capsys.readouterr().out)["diagnostics"]["kb_errors"] == 1


def test_a_withdrawal_note_others_may_see_names_only_public_units(tmp_path: Path) -> None:
    kb = _kb(tmp_path / "kb")
    session = Session.open([kb])
    (kb / "mixed.md").write_text(MIXED.replace("Role: Definition", "Role: Definitoin"))  # every unit fails
    session.reload()
    notes = [d for d in session.diagnostics() if d.code.value == "UNITS_WITHDRAWN"]
    assert len(notes) == 1 and not notes[0].author_only
    assert "hall::chunk-000::unit-000" in notes[0].message and "hallvault" not in notes[0].message
    (kb / "staff.md").write_text(STAFF.replace("Role: Definition", "Role: Definitoin"))
    session.reload()
    staff = next(d for d in session.diagnostics() if d.code.value == "UNITS_WITHDRAWN" and d.file.endswith("staff.md"))
    assert staff.author_only and "vault::chunk-000::unit-000" in staff.message  # the author's note names it


# --- issue 35: no existence oracle in eval, nor in ask/retrieve ---------------------------------

QUOTING = """## Context Unit notes::chunk-000::unit-000
Role: Definition
Topic: Safe notes
Claim: The safe notes are kept in vault::chunk-000::unit-000 and the lobby desk has a copy.
"""
# Restricted units that must leave no trace for the public caller: one whose id a public text
# quotes, one whose id differs from a public one only in case, and broken restricted lines.
HIDDEN = {
    "quoted.md": STAFF,
    "clash.md": STAFF.replace("vault::chunk-000::unit-000", "LOBBY::chunk-000::unit-000"),
    "broken.jsonl": '{"_id": "s1", "title": "Safe", "text": "Code 9", "acl": ["staff"]\n',
    "headless.md": "## Context Unit \nRole: Definition\nTopic: Safe\nClaim: Code 9\nAcl: staff\n",
    "bad-date.md": STAFF.replace("vault::", "dated::").replace("Acl: staff", "Acl: staff\nEffectiveFrom: 0"),
}


def _eval(kb_flags: list[str], queries: Path, capsys) -> tuple[int, str, str]:
    code = main(["eval", *kb_flags, "--json", str(queries)])
    out, err = capsys.readouterr()
    return code, json.dumps(_untimed(json.loads(out)), indent=1), err


def test_ask_retrieve_and_eval_read_the_same_with_and_without_hidden_units(tmp_path: Path, capsys) -> None:
    queries = tmp_path / "queries.json"
    queries.write_text(
        json.dumps(
            [
                {
                    "id": "q1",
                    "question": "Where are the safe notes kept?",
                    "expect_evidence": ["notes::chunk-000::unit-000"],
                    "must_not_appear": [],
                    "kind": "definition",
                },
                {
                    "id": "q2",
                    "question": QUESTION,
                    "expect_evidence": ["lobby::chunk-000::unit-000"],
                    "must_not_appear": [],
                    "kind": "definition",
                },
            ]
        )
    )
    outputs = []
    for hidden in (False, True):
        kb = tmp_path / ("with" if hidden else "without")
        kb.mkdir()
        (kb / "public.md").write_text(PUBLIC)
        (kb / "notes.md").write_text(QUOTING)
        if hidden:
            for name, text in HIDDEN.items():
                (kb / name).write_text(text)
        flags = ["--kb", str(kb), "--kb", str(kb / "broken.jsonl")] if hidden else ["--kb", str(kb)]
        # The same paths in both runs: the output names the KB folder.
        same = tmp_path / "kb"
        kb.rename(same)
        flags = [flag.replace(str(kb), str(same)) for flag in flags]
        runs = [_eval(flags, queries, capsys)]
        for command, flag in (("ask", []), ("ask", ["--json"]), ("retrieve", ["--json"])):
            code = main([command, *flags, *flag, "Where are the safe notes kept?"])
            out, err = capsys.readouterr()
            runs.append((code, json.dumps(_untimed(json.loads(out)), indent=1) if flag else out, err))
        same.rename(kb)
        outputs.append(runs)
    without, with_hidden = outputs
    # The gates pass without the hidden units, so with them they must too (they named the quoted id).
    assert json.loads(without[0][1])["safe"] is True
    for before, after in zip(without, with_hidden):
        assert after == before
