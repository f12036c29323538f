"""Memory records pin the content they cited: a follow-up never reuses a turn whose cited unit has
changed, been restricted or gone since, and the caller is told which turn was not used and why."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.kernel.contract import Request
from core.kernel.events import IntentDetected, RunStarted
from core.kernel.session import Session
from core.kernel.summary import summarise
from core.memory.cited import UNPINNED, content_digest
from core.memory.conversation import Conversation
from core.memory.store import MemoryStore
from core.memory.turns import remember, with_memory
from core.units import Caller

FERRIES = Path(__file__).parent.parent.parent / "fixtures" / "ferries"
PETREL = "fleet::chunk-000::unit-002"
PETREL_CLAIM = "Claim: Petrel is a car ferry that crosses from Harwick to Sandmere twice a day."


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    folder = tmp_path / "kb"
    shutil.copytree(FERRIES, folder)
    return folder


def _talk(session: Session, store: MemoryStore | None = None) -> Conversation:
    now = iter(range(1_000_000, 2_000_000, 30))
    return Conversation(
        Caller(), "harbour", session.engine_config.memory, session.retrieval.hdc, store, lambda: float(next(now))
    )


def _ask(session: Session, talk: Conversation, question: str) -> list[object]:
    request = with_memory(Request(question=question), talk, session.view(Caller()))
    events = list(session.run(request))
    remember(talk, events, session.view(Caller()))
    return events


def _resolved(events: list[object]) -> tuple[str, tuple[str, ...]]:
    intent = next(e for e in events if isinstance(e, IntentDetected))
    return intent.intents[0].target, intent.resolved


def _edit(kb: Path, old: str, new: str) -> None:
    path = kb / "fleet.md"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_a_turn_records_the_digest_of_each_unit_it_cited(kb: Path) -> None:
    session = Session.open([kb])
    talk = _talk(session)
    _ask(session, talk, "What is Petrel?")
    (turn,) = talk.turns
    view = session.view(Caller())
    assert PETREL in turn.unit_ids
    assert turn.unit_digests == tuple(content_digest(view.get(u)) for u in turn.unit_ids)


def test_a_follow_up_uses_the_turn_while_its_units_are_unchanged_even_when_they_moved(kb: Path) -> None:
    session = Session.open([kb])
    talk = _talk(session)
    _ask(session, talk, "What is Petrel?")
    _edit(kb, "# Harwick harbour ferries\n", "# Harwick harbour ferries\n\nA note on the fleet.\n\n")
    session.reload()
    assert session.view(Caller()).get(PETREL).location.line != talk.turns[0].turn  # it did move
    target, resolved = _resolved(_ask(session, talk, "And Tern?"))
    assert target == "What is Tern?" and resolved


@pytest.mark.parametrize(
    "change, reason",
    [
        ((PETREL_CLAIM, PETREL_CLAIM.replace("twice a day", "three times a day")), "has changed since"),
        ((PETREL_CLAIM, PETREL_CLAIM + "\nAcl: crew"), "a unit it cited is no longer in your view"),
        ((PETREL_CLAIM, PETREL_CLAIM + "\nEffectiveTo: 2000-01-01"), "a unit it cited is no longer in your view"),
        (
            (f"## Context Unit {PETREL}", "## Context Unit fleet::chunk-000::unit-902"),
            "a unit it cited is no longer in your view",
        ),
    ],
)
def test_a_turn_whose_cited_unit_changed_or_left_the_view_is_not_reused_and_the_caller_is_told(
    kb: Path, change: tuple[str, str], reason: str
) -> None:
    session = Session.open([kb])
    talk = _talk(session)
    _ask(session, talk, "What is Petrel?")
    _edit(kb, *change)
    session.reload()
    events = _ask(session, talk, "And Tern?")
    target, resolved = _resolved(events)
    assert target == "And Tern?" and not resolved
    started = next(e for e in events if isinstance(e, RunStarted))
    assert all(PETREL not in m.unit_ids for m in started.memory)
    note = f"turn 1 not used: {PETREL} {reason}" if reason == "has changed since" else f"turn 1 not used: {reason}"
    assert note in started.memory_withheld and note in summarise(events)["memory_withheld"]
    if reason != "has changed since":  # its id and turn 1's lead, which quoted it, show nowhere
        assert PETREL not in json.dumps(summarise(events)) and "twice a day" not in json.dumps(summarise(events))


def test_a_restricted_unit_reads_exactly_like_a_deleted_one(kb: Path, tmp_path: Path) -> None:
    notes = []
    for change in (
        (PETREL_CLAIM, PETREL_CLAIM + "\nRegion: EU"),
        (f"## Context Unit {PETREL}", "## Context Unit gone::chunk-000::unit-000"),
    ):
        folder = tmp_path / f"kb{len(notes)}"
        shutil.copytree(kb, folder)
        session = Session.open([folder])
        talk = _talk(session)
        _ask(session, talk, "What is Petrel?")
        _edit(folder, *change)
        session.reload()
        notes.append(_talk_withheld(session, talk))
    assert notes[0] == notes[1] and notes[0]


def _talk_withheld(session: Session, talk: Conversation) -> list[str]:
    return talk.vetted(session.view(Caller()))[1]


def test_a_rerun_of_a_request_offered_before_the_change_does_not_use_the_stale_turn(kb: Path) -> None:
    """The explorer's re-run and what-if reuse their request unchanged: the plugins check again."""
    session = Session.open([kb])
    talk = _talk(session)
    _ask(session, talk, "What is Petrel?")
    request = with_memory(Request(question="And Tern?"), talk, session.view(Caller()))
    assert _resolved(list(session.run(request)))[1]
    _edit(kb, PETREL_CLAIM, PETREL_CLAIM.replace("car ferry", "cargo ferry"))
    session.reload()
    events = list(session.run(request))
    target, resolved = _resolved(events)
    assert target == "And Tern?" and not resolved
    reason = next(e.reason for e in events if getattr(e, "plugin", "") == "sd-symbolic" and hasattr(e, "status"))
    assert f"memory turn 1 not used: {PETREL} has changed since" in reason


def test_records_without_digests_or_from_another_view_version_are_never_reused(kb: Path, tmp_path: Path) -> None:
    session = Session.open([kb])
    store = MemoryStore(tmp_path / "memory", session.engine_config.memory)
    talk = _talk(session, store)
    events = list(session.run(with_memory(Request(question="What is Petrel?"), talk, session.view(Caller()))))
    _edit(kb, "Claim: Tern is a passenger", "Claim: Tern is a fast passenger")
    session.reload()  # the run answered from the old view: its turn pins nothing
    remember(talk, events, session.view(Caller()))
    assert set(talk.turns[0].unit_digests) == {UNPINNED}
    assert any("cannot be checked" in line for line in talk.vetted(session.view(Caller()))[1])
    # A record written before records carried digests (an older mrptui's memory file).
    path = store.path(talk.caller, "harbour")
    legacy = [json.loads(line) for line in path.read_text().splitlines()]
    for record in legacy:
        record.pop("unit_digests")
    path.write_text("".join(json.dumps(r) + "\n" for r in legacy))
    again = _talk(session, store)
    assert again.turns and again.recall("Petrel", session.view(Caller())) == []


def test_ask_says_which_turn_it_did_not_use(kb: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    from mrptui.cli import main

    monkeypatch.setenv("MRPTUI_MEMORY_DIR", str(tmp_path / "memory"))
    assert main(["ask", "What is Petrel?", "--kb", str(kb), "--session", "s1"]) == 0
    _edit(kb, PETREL_CLAIM, PETREL_CLAIM.replace("Sandmere", "Eastholm"))
    capsys.readouterr()
    assert main(["ask", "And Tern?", "--kb", str(kb), "--session", "s1"]) == 0
    out = capsys.readouterr().out
    assert f"memory turn 1 not used: {PETREL} has changed since" in out and "from memory" not in out
    assert main(["memory", "list", "--session", "s1", "--kb", str(kb)]) == 0
    assert f"turn 1 not used: {PETREL} has changed since" in capsys.readouterr().out
