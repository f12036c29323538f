"""The explorer holds the real engine: a plugin it is held before is not called until the user steps,
and changes made while held steer what is ahead (or re-run to the same point)."""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

import pytest
from conftest import make_app
from helpers import ask, select_timeline_row, settle, until_quiet
from textual.widgets import Static

from core.kernel.contract import Request
from core.kernel.events import AttemptFinished, IntentDetected, Intervened, RunStarted
from core.kernel.session import Session
from core.units import Caller
from mrptui.breakpoints import Breakpoint
from mrptui.screens.modals import IntentModal
from mrptui.widgets.evidence import EvidenceTable

PLUGINS = """
import time

from core.kernel.contract import Descriptor, GsResult, GoalSolver, KbResult, KnowledgePlugin, PluginType, Status

CALLS = []


class Counting(KnowledgePlugin):
    descriptor = Descriptor(id="kb-count", type=PluginType.KB, name="counting", description="counts its calls",
                            remote=True)

    def retrieve(self, ctx, intent):
        CALLS.append(intent.target)
        return KbResult(status=Status.INSUFFICIENT, reason="it only counts")


class Sleepy(GoalSolver):
    descriptor = Descriptor(id="gs-sleepy", type=PluginType.GS, name="sleepy", description="sleeps")

    def solve(self, ctx, intent, evidence):
        time.sleep(5)
        return GsResult(status=Status.SUCCESS, answer="late")


def make(services):
    return [Counting(), Sleepy()]
"""
QUESTION = "What is Orion?"
SIZE = (160, 45)


@pytest.fixture(scope="module")
def plugins_module(tmp_path_factory):
    from core.infra.resources import config_dir

    config_path = config_dir()
    folder = tmp_path_factory.mktemp("debugger")
    (folder / "debugger_plugins.py").write_text(PLUGINS)
    sys.path.insert(0, str(folder))
    config = folder / "config"
    shutil.copytree(config_path, config)
    engine = json.loads((config / "engine.json").read_text())
    engine["plugins"].append("debugger_plugins:make")
    engine["planners"]["planner-default"]["kb"].insert(0, "kb-count")
    (config / "engine.json").write_text(json.dumps(engine))
    import debugger_plugins

    yield config, debugger_plugins
    sys.path.remove(str(folder))
    sys.modules.pop("debugger_plugins", None)


@pytest.fixture
def debug_session(plugins_module):
    config, module = plugins_module
    module.CALLS.clear()
    return Session.open(None, config), module.CALLS


def _app(session, **options):
    app = make_app(session, **options)
    app.caller = Caller()
    return app


async def _ask(pilot, question: str = QUESTION) -> None:
    """Ask, then leave the box (it keeps focus after Enter), so single letters step."""
    await ask(pilot, question)


def _status(app) -> str:
    return str(app.screen.query_one("#status", Static).render())


def _called(events) -> list[tuple[str, str, str]]:
    return [(e.stage, e.plugin, e.status) for e in events if isinstance(e, AttemptFinished) and e.status != "skipped"]


async def test_a_costly_plugin_is_not_called_while_held_and_once_after_n(debug_session):
    session, calls = debug_session
    app = _app(session, break_before_costly=True)
    async with app.run_test(size=SIZE) as pilot:
        await _ask(pilot)
        assert Breakpoint("costly") in app.breakpoints
        run = app.current
        assert not run.done and app.control.held.startswith("before kb-count (stage kb, revision 0)")
        time.sleep(0.2)
        assert calls == []
        assert "⏸ held before kb-count" in _status(app) and "before costly plugins" in _status(app)
        await pilot.press("n")
        await settle(pilot)
        assert calls == [QUESTION] and app.control.held  # one step: the call, then held again
        assert app.state.last_event.kind == "attempt_finished"
        await pilot.press("g")
        await settle(pilot)
        assert run.done and calls == [QUESTION] and app.state.answer is not None


async def test_excluding_the_held_plugin_applies_live_like_a_fresh_run_without_it(debug_session):
    session, calls = debug_session
    app = _app(session, break_before_costly=True)
    async with app.run_test(size=SIZE) as pilot:
        await _ask(pilot)
        await select_timeline_row(pilot, lambda r: r.plugin == "kb-count")
        await pilot.press("x")
        assert "on continue: kb-count excluded by the user" in _status(app)
        await pilot.press("g")
        await settle(pilot)
        run = app.current
        assert len(app.runs) == 1 and run.done and calls == []
        intervened = [e for e in run.events if isinstance(e, Intervened)]
        assert [(e.change, e.target, e.live) for e in intervened] == [("exclude_plugin", "kb-count", True)]
        assert [r.status for r in app.state.rows if r.kind == "intervention"] == ["live"]
        fresh = list(session.run(Request(question=QUESTION, excluded=frozenset({"kb-count"}))))
        assert _called(run.events) == _called(fresh)
        assert run.final.answer.answer == fresh[-2].answer


async def test_dropping_a_unit_after_retrieval_reruns_and_holds_at_the_same_point(debug_session):
    session, _ = debug_session
    app = _app(session)
    app.control.breakpoints.add(Breakpoint("stage", "gs"))
    async with app.run_test(size=SIZE) as pilot:
        await _ask(pilot)
        assert app.control.held.startswith("at the start of stage gs")
        table = app.screen.query_one(EvidenceTable)
        table.focus()
        dropped = table.selected.id
        await pilot.press("u")
        await settle(pilot)
        assert len(app.runs) == 2 and app.control.held.startswith("at the start of stage gs")
        started = app.current.events[0]
        assert isinstance(started, RunStarted) and started.excluded_units == (dropped,)
        assert any(isinstance(e, Intervened) and not e.live for e in app.current.events)
        assert all(c.id != dropped for s in app.state.retrievals for c in s.candidates)
        await pilot.press("g")
        await settle(pilot)
        assert app.current.done


async def test_an_intent_edited_while_held_at_seed_detection_replaces_it(debug_session):
    session, _ = debug_session
    app = _app(session)
    app.control.breakpoints.add(Breakpoint("stage", "sd"))
    async with app.run_test(size=SIZE) as pilot:
        await _ask(pilot)
        assert app.control.held.startswith("at the start of stage sd")
        await pilot.press("i")
        assert isinstance(app.screen, IntentModal)
        area = app.screen.query_one("#intent-text")
        area.text = '@i1 intent frobnicate "Orion"\n@i2 set $i1 output text\n'
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, IntentModal)  # refused: the parser's error is shown in place
        assert "INVALID_ACT_VALUE" in str(app.screen.query_one("#intent-problems", Static).render())
        area.text = '@i1 intent describe "Orion"\n@i2 set $i1 output text\n'
        await pilot.press("ctrl+s")
        await pilot.press("g")
        await settle(pilot)
        detected = [e for e in app.current.events if isinstance(e, IntentDetected)]
        assert detected and detected[0].plugin == "user" and detected[0].intents[0].target == "Orion"
        assert not any(
            e.stage == "sd" for e in app.current.events if isinstance(e, AttemptFinished) and e.status != "skipped"
        )


async def test_escape_cancels_a_plugin_that_sleeps(debug_session):
    session, _ = debug_session
    app = _app(session)
    async with app.run_test(size=SIZE) as pilot:
        app.runner.start_run(Request(question=QUESTION, caller=Caller(), pins={"gs": "gs-sleepy"}))
        for _ in range(300):
            await pilot.pause(0.01)
            if app.state.current_plugin == "gs-sleepy":
                break
        assert app.state.current_plugin == "gs-sleepy"
        await pilot.press("escape", "escape")  # the first leaves the question box, the second cancels
        await until_quiet(pilot, seconds=3)
        await settle(pilot)
        run = app.current
        assert run.done and run.final.status == "cancelled"
        last = [e for e in run.events if isinstance(e, AttemptFinished)][-1]
        assert (last.plugin, last.reason) == ("gs-sleepy", "cancelled by the user")


def test_held_state_snapshot(snap_compare):
    from fakes import FakeSession

    app = make_app(FakeSession())
    app.control.breakpoints.add(Breakpoint("plugin", "kb-thinkingdb"))

    async def run_before(pilot):
        await _ask(pilot, "which tools are relevant for data pipelines")

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_costly_plugins_are_only_those_that_can_run(debug_session):
    session, _ = debug_session
    assert session.costly_plugins() == {"kb-count"}  # remote; the LLM plugins have no endpoint, kb-thinkingdb is local


def test_trace_with_interventions_replays(tmp_path: Path, debug_session):
    from core.kernel.events import read_trace, write_trace
    from core.kernel.steering import Intervention, apply

    session, _ = debug_session
    request = apply(Request(question=QUESTION), Intervention(kind="exclude_plugin", target="kb-count"))
    events = list(session.run(request))
    write_trace(events, tmp_path / "t.jsonl")
    again, problems = read_trace(tmp_path / "t.jsonl")
    assert problems == [] and [e for e in again if isinstance(e, Intervened)][0].target == "kb-count"


async def test_x_on_a_held_run_says_truly_whether_the_rerun_holds_and_the_diff_says_how_the_old_run_ended(
    debug_session,
):
    """Issue 39: the toast said "holding at the same point", the re-run went to the end, and the
    diff's left side read "no answer (run running)" for a run that was stopped while held."""
    from helpers import record_notifications

    from mrptui.screens.diff import DiffScreen

    session, _ = debug_session
    app = _app(session, break_before_costly=True)
    notes = record_notifications(app)
    async with app.run_test(size=SIZE) as pilot:
        await _ask(pilot)
        held = app.control.held
        assert held.startswith("before kb-count")
        called = [r.plugin for r in app.state.rows if r.kind == "attempt" and r.status not in ("running", "·")]
        await select_timeline_row(pilot, lambda r: r.kind == "attempt" and r.plugin == called[0])
        await pilot.press("x")  # an attempt already made: a re-run
        await settle(pilot)
        assert len(app.runs) == 2
        assert any(f"holds again {held} if the re-run gets there" in n for n in notes), notes
        if app.control.held:
            assert app.control.held == held
        else:
            assert app.current.done and any("never got to where the last one was held" in n for n in notes), notes
        await pilot.press("escape", "d") if app.focused is app.main.query_one("#query") else await pilot.press("d")
        await settle(pilot)
        diff = app.screen
        assert isinstance(diff, DiffScreen)
        assert "no answer (run running)" not in diff.plain
        assert f"stopped while held {held}: run 2 replaced it" in diff.plain
