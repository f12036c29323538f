"""The Session facade as the TUI and CLI use it: reload, rules, why-not, request checks."""

from __future__ import annotations

import gc
import shutil
from pathlib import Path

import pytest

from core.infra import collector
from core.kernel import session as session_module
from core.kernel.contract import RegistryError, Request
from core.kernel.session import Session
from core.kernel.steering import Steering
from core.units import Caller
from mrptui.explorer_session import ExplorerSession

UNIT = """## Context Unit notes::chunk-000::unit-000
Role: Definition
Topic: Quasar
Claim: Quasar is the {word} scheduler of the demo cluster.
"""


@pytest.fixture
def workspace(tmp_path: Path, config_path: Path) -> tuple[Path, Path]:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "notes.md").write_text(UNIT.format(word="nightly"))
    config = tmp_path / "config"
    shutil.copytree(config_path, config)
    return kb, config


def test_reload_picks_up_an_edit(workspace) -> None:
    kb, config = workspace
    session = Session.open([kb], config)
    before = session.fingerprint()
    (kb / "notes.md").write_text(UNIT.format(word="hourly"))
    assert session.fingerprint() != before
    session.reload()
    assert "hourly" in session.unit("notes::chunk-000::unit-000", Caller()).claim


def test_a_broken_edit_withdraws_the_unit_and_shows_the_error(workspace) -> None:
    kb, config = workspace
    session = Session.open([kb], config)
    (kb / "notes.md").write_text(UNIT.format(word="hourly").replace("Role: Definition", "Role: Definitoin"))
    problems = session.reload()
    assert [d.code.value for d in problems if d.is_error] == ["INVALID_ROLE_VALUE"]
    withdrawn = [d.message for d in problems if d.code.value == "UNITS_WITHDRAWN"]
    # One unit: the note names it, rather than speaking of "units this file held".
    assert withdrawn == [
        "unit notes::chunk-000::unit-000 is withdrawn for every caller until this file's errors are fixed"
    ]
    assert session.unit("notes::chunk-000::unit-000", Caller()) is None
    session.reload()  # still broken: the note stays, still naming the unit
    assert [d.message for d in session.diagnostics() if d.code.value == "UNITS_WITHDRAWN"] == withdrawn


def test_a_withdrawal_note_names_a_few_units_and_counts_the_rest() -> None:
    from core.kb.withdrawal import withdrawn_message

    assert withdrawn_message(["b", "a"]) == (
        "2 units this file held before are withdrawn for every caller until this file's errors are fixed: a, b"
    )
    assert withdrawn_message(list("edcba")).endswith(": a, b, c and 2 more")


def test_a_broken_rules_file_keeps_the_last_good_rules(workspace) -> None:
    kb, config = workspace
    session = Session.open([kb], config)
    count = len(session.rules())
    (config / "thinkingdb.json").write_text("{ not json")
    problems = session.reload()
    assert any(d.code.value == "INVALID_JSON" for d in problems)
    assert len(session.rules()) == count > 0


def test_rules_rows_carry_their_position(workspace) -> None:
    session = Session.open([workspace[0]], workspace[1])
    row = next(r for r in session.rules() if r["id"] == "tool_to_capability")
    assert row["premises"] == ["?x uses ?y", "?y provides ?z"]
    assert row["conclusion"] == "?x has_capability ?z"
    assert row["line"] > 1 and row["file"].endswith("thinkingdb.json")


def test_why_not_through_the_explorers_session(workspace) -> None:
    session = ExplorerSession.open([workspace[0]], workspace[1])
    reasons = session.why_not("notes::chunk-000::unit-000", "What is Quasar?", Caller())
    assert reasons["bm25"].startswith("shares quasar")
    assert session.why_not("nope::chunk-000::unit-000", "What is Quasar?", Caller()) == {
        "visibility": "not in this caller's view: no such unit, or it is restricted or not in effect on this date"
        "; did you mean 'notes::chunk-000::unit-000'?"
    }


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (Request(question="q", pins={"kb": "gs-symbolic"}), "not a kb-plugin"),
        (Request(question="q", pins={"gs": "gs-nope"}), "unknown plugin id 'gs-nope'"),
        (Request(question="q", excluded=frozenset({"kb-nope"})), "unknown plugin id 'kb-nope'"),
        (Request(question="q", planner="planner-nope"), "unknown planner"),
    ],
)
def test_check_request_refuses_unknown_ids(workspace, request_, message) -> None:
    session = Session.open([workspace[0]], workspace[1])
    with pytest.raises(RegistryError, match=message):
        session.check_request(request_)


def test_warm_up_builds_the_callers_indexes_before_the_first_question(workspace) -> None:
    session = Session.open([workspace[0]], workspace[1])
    caller = Caller()
    session.warm_up(caller)
    built = session.indexes.for_view(session.view(caller))._built
    assert set(built) == {"bm25", "tdb"}


def test_a_question_does_not_wait_for_an_index_it_does_not_need_while_another_builds(workspace, monkeypatch) -> None:
    """The explorer builds HDC in the background after the other indexes (seconds at a million
    units): a question that needs only BM25 and ThinkingDB must not wait for it."""
    import threading

    from core.kb import indexes as indexes_module

    session = Session.open([workspace[0]], workspace[1])
    caller = Caller()
    session.warm_up(caller)
    started, release = threading.Event(), threading.Event()
    build_hdc = indexes_module.ViewIndexes._build_hdc

    def slow_hdc(self):
        started.set()
        assert release.wait(30)
        return build_hdc(self)

    monkeypatch.setattr(indexes_module.ViewIndexes, "_build_hdc", slow_hdc)
    background = threading.Thread(target=session.warm_up_hdc, args=(caller,))
    background.start()
    assert started.wait(30)
    answered = []
    request = Request(question="What is Quasar?", caller=caller, pins={"kb": "kb-fast"})
    asker = threading.Thread(target=lambda: answered.append(list(session.run(request))))
    asker.start()
    asker.join(30)
    still_building = not session.hdc_ready(caller)
    release.set()
    background.join(30)
    assert answered and still_building  # answered while HDC was still being built
    assert session.hdc_ready(caller)
    # Callers asking for an index while it is being built wait for that build, not start their own.
    calls, gate = [], threading.Event()

    def counted_hdc(self):
        calls.append(1)
        assert gate.wait(30)
        return build_hdc(self)

    monkeypatch.setattr(indexes_module.ViewIndexes, "_build_hdc", counted_hdc)
    (workspace[0] / "notes.md").write_text(UNIT.format(word="hourly"))
    session.reload()  # a new view: its HDC index is not built yet
    threads = [threading.Thread(target=session.warm_up_hdc, args=(caller,)) for _ in range(4)]
    for thread in threads:
        thread.start()
    gate.set()
    for thread in threads:
        thread.join(30)
    assert calls == [1] and session.hdc_ready(caller)


def _collected(obj: object) -> bool:
    """Whether the cyclic collector's generations hold `obj` (frozen objects are in none)."""
    return any(o is obj for o in gc.get_objects())


def test_a_large_kb_is_kept_out_of_the_cyclic_collector_until_a_reload(workspace, monkeypatch) -> None:
    kb, config = workspace
    collector.back_into_collections()
    try:
        small = Session.open([kb], config)
        assert gc.get_freeze_count() == 0 and _collected(small.kb)
        monkeypatch.setattr(session_module, "FROZEN_FROM_UNITS", 1)  # this one-unit KB counts as large
        large = Session.open([kb], config)
        assert gc.get_freeze_count() > 0 and not _collected(large.kb)
        (kb / "notes.md").write_text(UNIT.format(word="hourly"))
        large.reload()
        assert not _collected(large.kb)
        # A reload unfreezes first, so the KB it replaces is collected again once unused.
        monkeypatch.setattr(session_module, "FROZEN_FROM_UNITS", 2)
        large.reload()
        assert gc.get_freeze_count() == 0 and _collected(large.kb)
    finally:
        collector.back_into_collections()


def test_the_collector_waits_while_a_run_is_pulled_through_and_not_while_a_steered_one_is_held(workspace) -> None:
    kb, config = workspace
    session = Session.open([kb], config)
    assert gc.isenabled()
    pulled = session.run(Request(question="What is Quasar?"))
    seen = [gc.isenabled() for _ in pulled]
    assert len(seen) > 3 and not any(seen)
    assert gc.isenabled()
    # A caller that stops early gives the collector back when it closes the run.
    stopped = session.run(Request(question="What is Quasar?"))
    next(stopped)
    assert not gc.isenabled()
    stopped.close()
    assert gc.isenabled()
    # A debugger may hold a steered run at any event for as long as the user looks.
    steered = [gc.isenabled() for _ in session.run(Request(question="What is Quasar?"), steering=Steering())]
    assert len(steered) > 3 and all(steered)


def test_a_collector_turned_off_by_the_caller_stays_off_after_a_run(workspace) -> None:
    kb, config = workspace
    session = Session.open([kb], config)
    gc.disable()
    try:
        list(session.run(Request(question="What is Quasar?")))
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_no_full_collection_runs_while_the_hdc_index_encodes_the_view(workspace, monkeypatch) -> None:
    """The explorer builds HDC in a worker while keys are pressed: a full collection over the
    build's live sentences and words held the interpreter's lock ~0.1 s each (issue 41)."""
    from core.store import vectors

    session = Session.open([workspace[0]], workspace[1])
    caller = Caller()
    encode = vectors.hdc_vectors
    seen: list[tuple[bool, int]] = []

    def watched(*args, **kwargs):
        seen.append((gc.isenabled(), gc.get_threshold()[2]))
        return encode(*args, **kwargs)

    monkeypatch.setattr(vectors, "hdc_vectors", watched)
    before = gc.get_threshold()
    session.warm_up_hdc(caller)
    assert seen == [(True, collector.NO_FULL_COLLECTIONS)] and session.hdc_ready(caller)
    assert gc.get_threshold() == before
