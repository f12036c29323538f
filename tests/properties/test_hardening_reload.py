"""Reload consistency: a run that is under way while the KB reloads sees only the KB it started
on (never a mix of old and new units), the next run sees the new one, and a reload where a file
became invalid still loads everything else and reports the errors.
"""

from __future__ import annotations

import os
import re
import shutil
import threading
from pathlib import Path

import pytest

from core.kb.knowledge_base import KnowledgeBase
from core.kernel.contract import Request
from core.kernel.events import AnswerReady, AttemptStarted, RunStarted, to_json_line
from core.kernel.session import Session
from core.units import Caller

ROOT = Path(__file__).resolve().parents[2]
HELIX = ROOT / "sample_kb" / "stack" / "helix.md"
QUESTION = "What is Helix?"
OLD_CLAIM = "Helix is the storage engine of Orion."
NEW_CLAIM = "Helix is the quasargrade storage engine of Orion."
# As an answer quotes it: the citation goes before the sentence's full stop.
OLD_QUOTE = OLD_CLAIM.rstrip(".")
NEW_UNIT_ID = "helix-storage::chunk-009::unit-099"
NEW_UNIT = f"""
## Context Unit {NEW_UNIT_ID}
Role: Definition
Topic: Helix
Claim: Helix is also called Spiral, the quasargrade archive of Orion.
UtilityActs: define
"""
UNIT_ID = re.compile(r"[\w.-]+::chunk-\d+::unit-\d+")


def edited_helix() -> str:
    text = HELIX.read_text(encoding="utf-8")
    assert OLD_CLAIM in text
    return text.replace(OLD_CLAIM, NEW_CLAIM) + NEW_UNIT


def write_atomically(path: Path, text: str) -> None:
    """Editors save by rename; a reload then reads the old or the new file, never half of one."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def unit_ids(events: list) -> set[str]:
    """Every unit id an event mentions, wherever it sits (candidates, proofs, citations)."""
    return {match for event in events for match in UNIT_ID.findall(to_json_line(event))}


def answer_of(events: list) -> AnswerReady:
    return next(e for e in events if isinstance(e, AnswerReady))


@pytest.fixture
def kb_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "kb"
    folder.mkdir()
    shutil.copy(HELIX, folder / "helix.md")
    shutil.copy(ROOT / "sample_kb" / "howto" / "troubleshooting.txt", folder)
    shutil.copy(ROOT / "sample_kb" / "policy" / "eu-general.cnl", folder)
    return folder


@pytest.fixture
def session(kb_folder: Path, config_path: Path) -> Session:
    return Session.open([kb_folder], config_path)


def test_a_run_under_way_sees_only_the_kb_it_started_on(session: Session, kb_folder: Path) -> None:
    old_kb = session.kb
    old_ids = {unit.id for unit in old_kb.view(Caller()).units}
    run = session.run(Request(question=QUESTION))
    events = []
    # Pull up to the first kb attempt: the plan is made, nothing has been retrieved yet.
    for event in run:
        events.append(event)
        if isinstance(event, AttemptStarted) and event.stage == "kb":
            break
    write_atomically(kb_folder / "helix.md", edited_helix())
    problems = session.reload()
    assert [p for p in problems if p.is_error] == []
    assert session.kb is not old_kb and NEW_UNIT_ID in {u.id for u in session.kb.units}
    events += list(run)

    assert events[0].kb_version == old_kb.view(Caller()).version != session.kb.view(Caller()).version
    assert unit_ids(events) <= old_ids and NEW_UNIT_ID not in unit_ids(events)
    answer = answer_of(events)
    assert answer.status == "grounded" and "helix-storage::chunk-000::unit-000" in answer.evidence_ids
    assert OLD_QUOTE in answer.answer and "quasargrade" not in answer.answer

    fresh = list(session.run(Request(question=QUESTION)))
    assert fresh[0].kb_version == session.kb.view(Caller()).version
    new_ids = {unit.id for unit in session.kb.view(Caller()).units}
    assert unit_ids(fresh) <= new_ids
    assert "quasargrade" in answer_of(fresh).answer and OLD_QUOTE not in answer_of(fresh).answer


def test_runs_racing_reloads_never_mix_two_kbs(session: Session, kb_folder: Path) -> None:
    """A reloader flips the file between two versions while runs go on; each run must match one KB."""
    versions = {"old": (kb_folder / "helix.md").read_text(encoding="utf-8"), "new": edited_helix()}
    markers = {"old": OLD_QUOTE, "new": "quasargrade"}
    seen: dict[str, tuple[str, frozenset[str]]] = {}

    def record(variant: str) -> None:
        kb = session.kb
        view = kb.view(Caller())
        seen[view.version] = (variant, frozenset(unit.id for unit in view.units))

    record("old")
    stop = threading.Event()
    failures: list[BaseException] = []

    def reloader() -> None:
        try:
            flips = 0
            while not stop.is_set() or flips < 4:
                variant = "new" if flips % 2 == 0 else "old"
                write_atomically(kb_folder / "helix.md", versions[variant])
                session.reload()
                record(variant)
                flips += 1
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            failures.append(exc)

    thread = threading.Thread(target=reloader, daemon=True)
    thread.start()
    runs = []
    try:
        for _ in range(25):
            runs.append(list(session.run(Request(question=QUESTION))))
    finally:
        stop.set()
        thread.join(30)
    assert not thread.is_alive() and failures == []
    for events in runs:
        variant, ids = seen[next(e for e in events if isinstance(e, RunStarted)).kb_version]
        assert unit_ids(events) <= ids
        other = "old" if variant == "new" else "new"
        answer = answer_of(events).answer
        assert markers[variant] in answer and markers[other] not in answer
    assert {variant for variant, _ in seen.values()} == {"old", "new"}


# --- reloads with broken files ---------------------------------------------------------------------

BROKEN_HELIX_UNIT = """
## Context Unit helix-storage::chunk-009::unit-100
Role: Wizard
Topic: Helix
Claim: A unit with a role that does not exist.
"""


def test_a_reload_with_a_broken_file_loads_the_rest_and_reports_the_errors(session: Session, kb_folder: Path) -> None:
    before = {unit.id: unit for unit in session.kb.units}
    # helix.md gets an edit and a broken unit; the SOP file gets an unterminated string.
    write_atomically(kb_folder / "helix.md", edited_helix() + BROKEN_HELIX_UNIT)
    sop = kb_folder / "eu-general.cnl"
    sop_text = sop.read_text(encoding="utf-8")
    write_atomically(sop, sop_text + '\n@z1 ku atomic "eu-general::chunk-009::unit-001\n')
    (kb_folder / "added.txt").write_text("Quasar uses Helix. Quasar is relevant for nightly archiving.\n")

    problems = session.reload()
    errors = [p for p in problems if p.is_error]
    assert {(Path(p.file).name, p.code.value) for p in errors} == {
        ("helix.md", "INVALID_ROLE_VALUE"),
        ("eu-general.cnl", "UNTERMINATED_STRING"),
    }
    lines = {Path(p.file).name: p.line for p in errors}
    assert lines["helix.md"] == edited_helix().count("\n") + 3
    assert lines["eu-general.cnl"] == sop.read_text(encoding="utf-8").count("\n")
    # No good unit went missing (the broken units are new), so nothing is withdrawn, and the
    # edits to the broken files' valid units load like a fresh load's.
    assert [p for p in problems if p.code.value == "UNITS_WITHDRAWN"] == []
    after = {unit.id: unit for unit in session.kb.units}
    assert set(before) <= set(after) and NEW_UNIT_ID in after
    assert NEW_CLAIM in after["helix-storage::chunk-000::unit-000"].claim
    assert {after[uid].claim for uid in after if uid.startswith("added::")} == {
        "Quasar uses Helix.",
        "Quasar is relevant for nightly archiving.",
    }
    events = list(session.run(Request(question="What is Quasar relevant for?")))
    assert unit_ids(events) <= {unit.id for unit in session.kb.view(Caller()).units}
    assert answer_of(events).status in ("grounded", "weak")
    archiving = next(uid for uid in after if uid.startswith("added::") and "archiving" in after[uid].claim)
    assert archiving in unit_ids(events)

    # Fixing the files brings their new units in and the warnings go away.
    write_atomically(kb_folder / "helix.md", edited_helix())
    write_atomically(sop, sop_text)
    problems = session.reload()
    assert [p for p in problems if p.is_error or p.code.value == "UNITS_WITHDRAWN"] == []
    assert NEW_UNIT_ID in {unit.id for unit in session.kb.units}


def test_a_good_unit_that_breaks_is_withdrawn_and_its_neighbours_stay(session: Session, kb_folder: Path) -> None:
    good = HELIX.read_text(encoding="utf-8")
    neighbours = {u.id for u in session.kb.units if u.id.startswith("helix-storage::")} - {
        "helix-storage::chunk-000::unit-000"
    }
    first_role = good.index("Role: ")
    broken = good[:first_role] + "Role: Wizard" + good[good.index("\n", first_role) :]
    write_atomically(kb_folder / "helix.md", broken)
    problems = session.reload()
    assert [Path(p.file).name for p in problems if p.code.value == "UNITS_WITHDRAWN"] == ["helix.md"]
    assert session.unit("helix-storage::chunk-000::unit-000", Caller()) is None
    assert neighbours and neighbours <= {u.id for u in session.kb.units}


def test_a_file_broken_from_the_start_still_loads_its_valid_units(kb_folder: Path, config_path: Path) -> None:
    write_atomically(kb_folder / "helix.md", edited_helix() + BROKEN_HELIX_UNIT)
    session = Session.open([kb_folder], config_path)
    assert NEW_UNIT_ID in {unit.id for unit in session.kb.units}
    assert [p.code.value for p in session.diagnostics() if p.is_error] == ["INVALID_ROLE_VALUE"]


def test_reload_agrees_with_a_fresh_load_when_a_file_stays_broken(
    session: Session, kb_folder: Path, config_path: Path
) -> None:
    # The file already has one bad unit, and keeps it, while the user edits a good one.
    write_atomically(kb_folder / "helix.md", HELIX.read_text(encoding="utf-8") + BROKEN_HELIX_UNIT)
    session.reload()
    write_atomically(kb_folder / "helix.md", edited_helix() + BROKEN_HELIX_UNIT)
    session.reload()
    fresh = KnowledgeBase.load([kb_folder])
    unit = session.unit("helix-storage::chunk-000::unit-000", Caller())
    assert unit is not None and NEW_CLAIM in unit.claim
    assert {u.id for u in session.kb.units} == {u.id for u in fresh.units}


# --- fail closed: a failed edit never leaves the older, more open version served ---------------

WARD = """# Ward notes

## Context Unit ward::chunk-000::unit-000
Role: Definition
Topic: ICU door
Claim: The ICU door code is K8812X.

## Context Unit ward::chunk-000::unit-001
Role: Definition
Topic: ICU visiting hours
Claim: ICU visiting hours run from ten to six.
"""


def test_an_edit_that_restricts_a_unit_and_fails_withdraws_it_for_every_caller(
    tmp_path: Path, config_path: Path
) -> None:
    """Issue 14, leak 3: the author adds an Acl and mistypes a date in the same edit."""
    folder = tmp_path / "ward"
    folder.mkdir()
    write_atomically(folder / "ward.md", WARD)
    session = Session.open([folder], config_path)
    public, nurse = Caller(), Caller(tags=frozenset({"staff:icu"}))
    question = Request(question="What is the ICU door code?", caller=public)
    assert "K8812X" in answer_of(list(session.run(question))).answer

    edited = WARD.replace(
        "Claim: The ICU door code is K8812X.\n",
        "Claim: The ICU door code is K8812X.\nAcl: staff:icu\nEffectiveFrom: 2026-13-01\n",
    )
    write_atomically(folder / "ward.md", edited)
    problems = session.reload()

    assert [(p.code.value, p.line) for p in problems if p.is_error] == [("INVALID_DATE_VALUE", 8)]
    assert [p.code.value for p in problems if p.file == str(folder / "ward.md") and not p.is_error] == [
        "UNITS_WITHDRAWN"
    ]
    for caller in (public, nurse):
        assert session.unit("ward::chunk-000::unit-000", caller) is None
        events = list(session.run(Request(question="What is the ICU door code?", caller=caller)))
        # A code with letters: a duration in the trace can contain any run of digits.
        assert "K8812X" not in "\n".join(to_json_line(e) for e in events)
    # The unit whose text did not change stays served, and the reload agrees with a fresh load.
    assert session.unit("ward::chunk-000::unit-001", public) is not None
    assert {u.id for u in session.kb.units} == {u.id for u in KnowledgeBase.load([folder]).units}

    # The note stays while the file is broken, whatever else reloads, and goes once it is fixed.
    (folder / "other.md").write_text(WARD.replace("ward::", "other::"))
    assert any(p.code.value == "UNITS_WITHDRAWN" for p in session.reload())
    write_atomically(folder / "ward.md", edited.replace("2026-13-01", "2026-01-13"))
    problems = session.reload()
    assert [p for p in problems if p.is_error or p.code.value == "UNITS_WITHDRAWN"] == []
    assert session.unit("ward::chunk-000::unit-000", public) is None
    assert "K8812X" in session.unit("ward::chunk-000::unit-000", Caller(tags=frozenset({"staff:icu"}))).claim
