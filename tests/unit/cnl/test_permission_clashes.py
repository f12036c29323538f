"""Two units with one id, one restricted and one public: which unit a caller is served is decided
within the caller's view. A caller who cannot see the restricted unit is served the public one
exactly as if the restricted one did not exist (in any reader, in either load order, across
reloads); a caller who can see both is served neither; the author is told at both places."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from core.answer.whynot import why_not_asked
from core.cnl import read_text
from core.infra.diagnostics import Code
from core.kb.knowledge_base import KnowledgeBase
from core.kernel.session import Session
from core.units import Caller

SECRET = "The vault combination is 4471."
OPEN = "The lobby opens at nine."
PUBLIC, STAFF, BOTH = Caller(), Caller(tags={"staff"}), Caller(tags={"staff", "desk"})


def _markdown(uid: str, text: str, acl: str | None) -> str:
    return f"## Context Unit {uid}\nRole: Definition\nTopic: Hours\nClaim: {text}\n" + (f"Acl: {acl}\n" if acl else "")


def _sop(uid: str, text: str, acl: str | None) -> str:
    lines = [f'@k1 ku atomic "{uid}"', "set $k1 role Definition", 'set $k1 topic "Hours"', f'set $k1 claim "{text}"']
    return "\n".join(lines + ([f"set $k1 acl [{acl}]"] if acl else [])) + "\n"


def _jsonl(uid: str, text: str, acl: str | None) -> str:
    return json.dumps({"_id": uid, "title": "Hours", "text": text, **({"acl": [acl]} if acl else {})}) + "\n"


def _text(uid: str, text: str, acl: str | None) -> str:
    assert acl is None, "plain text has no fields: it holds public units only"
    return f"{text}\n"


WRITERS: dict[str, tuple[str, Callable[[str, str, str | None], str]]] = {
    "markdown": (".md", _markdown),
    "sop": (".cnl", _sop),
    "jsonl": (".jsonl", _jsonl),
    "text": (".txt", _text),
}


def _public_id(kind: str) -> str:
    """The id the public unit has: plain text derives it from the paragraph."""
    if kind != "text":
        return "hours::chunk-000::unit-000"
    [unit], _ = read_text(_text("", OPEN, None), "hours.txt")
    return unit.id


def _write(folder: Path, name: str, kind: str, uid: str, text: str, acl: str | None) -> Path:
    suffix, writer = WRITERS[kind]
    path = folder / f"{name}{suffix}"
    path.write_text(writer(uid, text, acl))
    return path


def _served(kb: KnowledgeBase, caller: Caller) -> list[tuple[str, str]]:
    return [(unit.id, unit.body) for unit in kb.view(caller).units]


@pytest.mark.parametrize("restricted_first", [True, False], ids=["restricted file first", "public file first"])
@pytest.mark.parametrize("restricted", ["markdown", "sop", "jsonl"])
@pytest.mark.parametrize("public", list(WRITERS))
def test_a_clash_changes_nothing_for_a_caller_who_cannot_see_the_restricted_unit(
    tmp_path: Path, public: str, restricted: str, restricted_first: bool
) -> None:
    uid = _public_id(public)
    open_file = _write(tmp_path, "hours", public, uid, OPEN, None)
    alone = KnowledgeBase.load([open_file])
    secret_file = _write(tmp_path, "vault", restricted, uid, SECRET, "staff")
    files = [secret_file, open_file] if restricted_first else [open_file, secret_file]
    kb = KnowledgeBase.load(files)
    assert _served(kb, PUBLIC) == _served(alone, PUBLIC) == [(uid, OPEN)]
    assert kb.view(PUBLIC).version == alone.view(PUBLIC).version
    assert _served(kb, STAFF) == [], "a caller who may see both is served neither"
    assert uid not in kb.view(STAFF) and kb.view(STAFF).get(uid) is None
    [clash] = [d for d in kb.diagnostics if d.code is Code.DUPLICATE_UNIT_ID]
    later, earlier = files[1], files[0]
    assert clash.file == str(later) and f"first defined at {earlier}:1" in clash.message and clash.author_only


def test_a_clash_between_two_restricted_units_serves_each_its_own_callers(tmp_path: Path) -> None:
    uid = "hours::chunk-000::unit-000"
    staff = _write(tmp_path, "a", "markdown", uid, SECRET, "staff")
    desk = _write(tmp_path, "b", "sop", uid, "The desk key is in drawer two.", "desk")
    kb = KnowledgeBase.load([staff, desk])
    assert _served(kb, STAFF) == [(uid, SECRET)]
    assert _served(kb, Caller(tags={"desk"})) == [(uid, "The desk key is in drawer two.")]
    assert _served(kb, BOTH) == [] and _served(kb, PUBLIC) == []


def test_a_clash_within_one_file(tmp_path: Path) -> None:
    uid = "hours::chunk-000::unit-000"
    path = tmp_path / "hours.md"
    path.write_text(_markdown(uid, SECRET, "staff") + "\n" + _markdown(uid, OPEN, None))
    kb = KnowledgeBase.load([path])
    assert _served(kb, PUBLIC) == [(uid, OPEN)] and _served(kb, STAFF) == []
    session = Session.from_kb(kb)
    assert session.unit(uid, PUBLIC).body == OPEN and session.unit(uid, STAFF) is None


@pytest.mark.parametrize("restricted", ["markdown", "sop", "jsonl"])
def test_a_clash_that_appears_and_goes_on_reload(tmp_path: Path, restricted: str) -> None:
    uid = _public_id("markdown")
    open_file = _write(tmp_path, "hours", "markdown", uid, OPEN, None)
    suffix, writer = WRITERS[restricted]
    secret_file = tmp_path / f"vault{suffix}"
    secret_file.write_text(writer("vault::chunk-000::unit-000", SECRET, "staff"))
    # The restricted file is named first: in load order it would take the id.
    session = Session.open([secret_file, open_file])
    before = {caller.key: _served(session.kb, caller) for caller in (PUBLIC, STAFF)}
    public_health = session.health(PUBLIC)
    assert before[STAFF.key] == [("hours::chunk-000::unit-000", OPEN), ("vault::chunk-000::unit-000", SECRET)]

    secret_file.write_text(writer(uid, SECRET, "staff"))  # the clash appears
    session.reload()
    assert _served(session.kb, PUBLIC) == before[PUBLIC.key] == [(uid, OPEN)]
    assert _served(session.kb, STAFF) == []
    assert session.health(PUBLIC) == public_health
    assert any(d.code is Code.DUPLICATE_UNIT_ID for d in session.diagnostics())

    secret_file.write_text(writer("vault::chunk-000::unit-000", SECRET, "staff"))  # and goes
    session.reload()
    assert {caller.key: _served(session.kb, caller) for caller in (PUBLIC, STAFF)} == before
    assert not any(d.code is Code.DUPLICATE_UNIT_ID for d in session.diagnostics())


def test_why_not_says_nothing_of_the_restricted_twin(tmp_path: Path) -> None:
    uid = "hours::chunk-000::unit-000"
    secret_file = _write(tmp_path, "a-vault", "markdown", uid, SECRET, "staff")
    open_file = _write(tmp_path, "hours", "markdown", uid, OPEN, None)
    session = Session.open([secret_file, open_file])
    alone = Session.open([open_file])
    question = "When does the lobby open?"
    assert why_not_asked(session, uid, question, PUBLIC) == why_not_asked(alone, uid, question, PUBLIC)


def test_why_not_tells_a_caller_who_may_see_both_why_neither_is_served(tmp_path: Path) -> None:
    uid = "hours::chunk-000::unit-000"
    secret_file = _write(tmp_path, "a-vault", "markdown", uid, SECRET, "staff")
    open_file = _write(tmp_path, "hours", "markdown", uid, OPEN, None)
    session = Session.open([secret_file, open_file])
    staff = why_not_asked(session, uid, "When does the lobby open?", STAFF)["visibility"]
    assert staff.startswith("withheld: 2 units this caller may see share this id")
    desk = why_not_asked(session, uid, "When does the lobby open?", Caller(tags={"desk"}))["visibility"]
    assert desk == "visible to this caller"
