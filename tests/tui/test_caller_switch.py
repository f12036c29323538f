"""The caller window (ctrl+g): asking as another caller without a restart, the question box's title
naming the caller, and permissions applied before ranking for the new caller in every pane."""

from __future__ import annotations

import datetime as dt
import threading

import pytest
from conftest import make_app
from fake_kb import AS_OF
from helpers import ask, record_notifications, settle, until
from textual import events
from textual.content import Content
from textual.widgets import Input, Static

from core.memory.records import caller_digest
from core.units import Caller
from mrptui.caller_text import CallerError, parse_caller
from mrptui.explorer_session import ExplorerSession
from mrptui.screens.caller import CallerModal
from mrptui.screens.kb import KBScreen
from mrptui.widgets.answer import AnswerPanel, CitationList
from mrptui.widgets.evidence import EvidenceTable
from mrptui.widgets.query import QueryBox

SIZE = (160, 45)
PUBLIC = "lamp::chunk-000::unit-000"
STAFF_ONLY = "keep::chunk-000::unit-000"


def write_lighthouse(folder) -> None:
    """Two units on one topic; the second only a caller holding the tag `staff` may see."""
    (folder / "lamp.md").write_text(
        f"## Context Unit {PUBLIC}\nRole: Explanation\nTopic: Lighthouse lamp\n"
        "Claim: The lighthouse lamp turns once every ten seconds.\n",
        encoding="utf-8",
    )
    (folder / "keep.md").write_text(
        f"## Context Unit {STAFF_ONLY}\nRole: Explanation\nTopic: Lighthouse lamp key\n"
        "Claim: The lighthouse lamp key hangs in the keeper's office.\nAcl: staff\n",
        encoding="utf-8",
    )


async def choose_caller(pilot, tags: str = "", region: str = "", as_of: str = "", *, wait: bool = True) -> None:
    """ctrl+g, fill the three fields, Enter; then (`wait`) let the workers finish."""
    await pilot.press("ctrl+g")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, CallerModal)
    for name, value in (("tags", tags), ("region", region), ("as-of", as_of)):
        screen.query_one(f"#caller-{name}", Input).value = value
    await pilot.press("enter")
    if wait:
        await settle(pilot)
    else:
        await pilot.pause()


def pane_text(app) -> str:
    """What the main screen's panes were given to draw: the state at the cursor, the evidence rows,
    the answer's text and citations."""
    main = app.main
    evidence = [c.id for c in main.query_one(EvidenceTable)._shown]
    answer = str(main.query_one("#answer-text", Static).content)
    citations = [str(option.id) for option in main.query_one(CitationList).options]
    return "\n".join([repr(app.state), *evidence, answer, *citations])


def test_a_caller_is_read_as_the_cli_reads_it() -> None:
    today = dt.date(2026, 5, 27)
    assert parse_caller(" staff , ops ", "EU", "", today) == Caller(tags={"staff", "ops"}, region="EU", as_of=today)
    assert parse_caller("", "", "2026-01-02", today) == Caller(as_of=dt.date(2026, 1, 2))
    with pytest.raises(CallerError) as bad_date:
        parse_caller("", "", "2026-13-45", today)
    assert bad_date.value.field == "as_of" and bad_date.value.messages == ("2026-13-45",)
    with pytest.raises(CallerError) as bad_tag:
        parse_caller("a b", "", "", today)
    assert bad_tag.value.field == "identity"


async def test_ctrl_g_switches_the_caller_and_asks_the_last_question_again(app) -> None:
    async with app.run_test(size=SIZE) as pilot:
        query = app.main.query_one(QueryBox)
        assert query.border_title == f"as public caller as of {AS_OF.isoformat()}"
        await ask(pilot)
        question = app.current.question
        await pilot.press("slash")  # from the question box: ctrl+g is not a key the box types
        await choose_caller(pilot, "staff", "EU", "2026-05-27")
        staff = Caller(tags={"staff"}, region="EU", as_of=dt.date(2026, 5, 27))
        assert app.caller == staff and not app.lifecycle.follow_today
        assert app.current.run_id == 2 and app.current.question == question
        assert app.current.request is not None and app.current.request.caller == staff
        assert query.border_title == "as caller staff in EU as of 2026-05-27"


async def test_an_empty_as_of_follows_the_calendar_and_no_question_runs_nothing(app) -> None:
    async with app.run_test(size=SIZE) as pilot:
        notes = record_notifications(app)
        await pilot.press("escape")
        await choose_caller(pilot, "staff")
        assert app.caller.as_of == dt.date.today() and app.lifecycle.follow_today
        assert app.runs == [] and notes == [f"now asking as the caller staff as of {dt.date.today().isoformat()}"]


async def test_a_refused_field_says_why_and_esc_keeps_the_caller(app) -> None:
    async with app.run_test(size=SIZE) as pilot:
        before = app.caller
        await pilot.press("escape", "ctrl+g")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, CallerModal)
        assert modal.query_one("#caller-as-of", Input).value == AS_OF.isoformat()  # prefilled
        modal.query_one("#caller-as-of", Input).value = "2026-13-45"
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is modal
        assert "a date like 2026-05-27, not '2026-13-45'" in str(modal.query_one("#caller-problems", Static).content)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is app.main and app.caller == before


async def test_a_unit_restricted_to_a_tag_shows_in_no_pane_without_it_and_in_the_panes_with_it(
    tmp_path, config_path
) -> None:
    write_lighthouse(tmp_path)
    app = make_app(ExplorerSession.open([tmp_path], config_path))
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, "Where does the lighthouse lamp key hang?")
        assert app.state.done and PUBLIC in pane_text(app)
        assert STAFF_ONLY not in pane_text(app)

        await choose_caller(pilot, "staff", as_of=AS_OF.isoformat())
        assert app.current.run_id == 2 and app.state.done
        assert app.caller.tags == {"staff"} and app.memory.conversation is not None
        assert app.memory.conversation.caller == caller_digest(app.caller)  # the new caller's memory
        assert STAFF_ONLY in [c.id for c in app.main.query_one(EvidenceTable)._shown]
        answer = app.main.query_one(AnswerPanel)
        assert STAFF_ONLY in app.state.answer.evidence_ids and STAFF_ONLY in str(answer.query_one(Static).content)
        await pilot.press("k")
        await settle(pilot)
        assert isinstance(app.screen, KBScreen) and STAFF_ONLY in [u.id for u in app.screen.units]

        await choose_caller(pilot, as_of=AS_OF.isoformat())  # back to the public caller, from the KB screen
        assert isinstance(app.screen, KBScreen) and STAFF_ONLY not in [u.id for u in app.screen.units]
        assert app.current.run_id == 3 and STAFF_ONLY not in pane_text(app)


class Gated:
    """The session's index warm-up and runs held at a gate for one kind of caller (`held(caller)`),
    so a test can look at the app while a new caller's indexes build and its first run waits."""

    def __init__(self, session, held) -> None:
        self.gate, self.held, self.warmed = threading.Event(), held, []
        warm_up, run = session.warm_up, session.run

        def gated_warm_up(caller) -> None:
            self.warmed.append(caller)
            if held(caller):
                self.gate.wait(10)
            warm_up(caller)

        def gated_run(request, steering=None):
            events = run(request, steering)
            if held(request.caller):
                self.gate.wait(10)
            yield from events

        session.warm_up, session.run = gated_warm_up, gated_run


async def test_a_new_callers_indexes_are_built_in_a_worker_as_soon_as_it_is_set(tmp_path, config_path) -> None:
    write_lighthouse(tmp_path)
    session = ExplorerSession.open([tmp_path], config_path)
    gated = Gated(session, held=lambda caller: "staff" in caller.tags)
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert not app.kb_state.indexing and gated.warmed == [app.caller]
        await pilot.press("escape")
        await choose_caller(pilot, "staff", as_of=AS_OF.isoformat(), wait=False)
        staff = Caller(tags={"staff"}, as_of=AS_OF)
        assert app.caller == staff and app.runs == []  # no question yet: the build is the switch's own
        await until(pilot, lambda: gated.warmed[-1:] == [staff])
        status = app.main.query_one("#status", Static)
        assert app.kb_state.indexing and "indexes building" in str(status.content)
        gated.gate.set()
        await settle(pilot)
        assert not app.kb_state.indexing and "indexes building" not in str(status.content)
        assert session.hdc_ready(staff)  # the escalation lane's index too, before any question


async def test_while_a_new_callers_first_run_waits_no_pane_shows_the_previous_callers_units(
    tmp_path, config_path
) -> None:
    """A question starting keeps the previous run's panes (marked stale) until it has its own; a
    run asked as another caller must not: the previous caller's units may be outside its view."""
    write_lighthouse(tmp_path)
    session = ExplorerSession.open([tmp_path], config_path)
    armed = threading.Event()
    gated = Gated(session, held=lambda caller: armed.is_set() and not caller.tags)
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await choose_caller(pilot, "staff", as_of=AS_OF.isoformat())
        await ask(pilot, "Where does the lighthouse lamp key hang?")
        assert STAFF_ONLY in pane_text(app)
        armed.set()
        await choose_caller(pilot, as_of=AS_OF.isoformat(), wait=False)
        await until(pilot, lambda: app.control.is_live and app.current.run_id == 2)
        await pilot.pause()
        assert STAFF_ONLY not in pane_text(app)
        assert app.kb_state.indexing
        gated.gate.set()
        await settle(pilot)
        assert app.state.done and PUBLIC in pane_text(app) and STAFF_ONLY not in pane_text(app)


def test_a_unit_window_names_the_dates_a_callers_as_of_must_fall_within() -> None:
    """Switching the as-of date is how an author checks a superseded or announced unit: its window
    says when it is in force."""
    from core.units import KnowledgeUnit
    from mrptui.screens.modals import unit_markup

    base = {"id": "rpl::chunk-000::unit-000", "source_id": "rpl", "chunk_id": "rpl::chunk-000", "role": "Constraint"}
    base |= {"topic": "RPL-14", "claim": "Rule RPL-14."}
    dated = KnowledgeUnit.model_validate(base | {"effective_from": "2025-01-01", "effective_to": "2026-03-31"})
    announced = KnowledgeUnit.model_validate(base | {"effective_from": "2026-07-01"})
    assert "effective  2025-01-01 to 2026-03-31" in Content.from_markup(unit_markup(dated, dated.id)).plain
    assert "effective  from 2026-07-01" in Content.from_markup(unit_markup(announced, announced.id)).plain
    assert "effective" not in unit_markup(KnowledgeUnit.model_validate(base), "x")


async def test_tab_moves_to_the_next_field_before_the_keys_typed_behind_it(app) -> None:
    """tmux send-keys, a paste: `staff<tab>EU` arrives at once; each key lands in the field that has
    the focus when it arrives (a bubbled tab moved it too late, and the tag read "staffEU")."""
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("escape", "ctrl+g")
        await pilot.pause()
        for key, character in [*((c, c) for c in "staff"), ("tab", "\t"), ("E", "E"), ("U", "U")]:
            app.post_message(events.Key(key, character))
        await settle(pilot)
        screen = app.screen
        assert [screen.query_one(f"#caller-{name}", Input).value for name in ("tags", "region")] == ["staff", "EU"]
