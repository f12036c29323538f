"""A held engine: nothing runs between pulls, and changes made while held steer what is ahead."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from test_engine import Gs, Kb, Outcome, Seed, Val, _engine, _of

from core.kernel.contract import KbResult, Request, Status
from core.kernel.events import (
    AnswerReady,
    AttemptFinished,
    AttemptStarted,
    IntentDetected,
    Intervened,
    RunFinished,
    StageStarted,
    read_trace,
    write_trace,
)
from core.kernel.steering import Intervention, Steering, apply

QUESTION = "why is x relevant for y?"
USER_INTENT = '@i1 intent describe "the pumps"\n@i2 set $i1 output text\n'


class UnitView:
    """A view that records which units a debugger removed (the kernel calls `without`)."""

    def __init__(self, excluded: frozenset[str] = frozenset()):
        self.excluded = excluded

    def with_extra(self, units):
        return self

    def without(self, unit_ids):
        return UnitView(self.excluded | frozenset(unit_ids))


class ViewKb(Kb):
    """Returns its ids minus the ones the view no longer holds."""

    def retrieve(self, ctx, intent):
        self.calls += 1
        kept = tuple(i for i in self.ids if i not in ctx.view.excluded)
        status = Status.SUCCESS if kept else Status.INSUFFICIENT
        return KbResult(status=status, reason=f"kept {len(kept)}", outcome=Outcome(kept))


def _plugins():
    return Seed(), Kb("kb-a", ids=("u1",)), Kb("kb-b", ids=("u2",)), Gs("gs-a"), Val()


def _pull_until(events, predicate):
    """Pull events until one matches; return everything pulled (the generator is then held)."""
    pulled = []
    for event in events:
        pulled.append(event)
        if predicate(event):
            return pulled
    raise AssertionError("no event matched")


def _called(events) -> list[tuple[str, str, str]]:
    return [(e.stage, e.plugin, e.status) for e in _of(events, AttemptFinished) if e.status != "skipped"]


def _summary(events):
    answer = _of(events, AnswerReady)[0]
    return _called(events), answer.answer, answer.status


def test_a_held_generator_calls_no_plugin_until_the_next_pull() -> None:
    plugins = _plugins()
    kb_a = plugins[1]
    run = _engine(*plugins).run(Request(question=QUESTION), UnitView(), steering=Steering())
    pulled = _pull_until(run, lambda e: isinstance(e, AttemptStarted) and e.plugin == "kb-a")
    time.sleep(0.05)
    assert kb_a.calls == 0 and pulled[-1].plugin == "kb-a"
    next(run)
    assert kb_a.calls == 1
    list(run)
    assert kb_a.calls == 1


def test_excluding_the_held_plugin_skips_it_and_matches_a_fresh_run_with_the_exclusion() -> None:
    steering = Steering()
    run = _engine(*_plugins()).run(Request(question=QUESTION), UnitView(), steering=steering)
    events = _pull_until(run, lambda e: isinstance(e, AttemptStarted) and e.plugin == "kb-a")
    steering.intervene(Intervention(kind="exclude_plugin", target="kb-a"))
    events += list(run)
    intervened = _of(events, Intervened)
    assert [(i.change, i.target, i.live) for i in intervened] == [("exclude_plugin", "kb-a", True)]
    skipped = [e for e in _of(events, AttemptFinished) if e.status == "skipped"]
    assert [(e.plugin, e.reason) for e in skipped] == [("kb-a", "excluded by the user")]
    fresh = list(_engine(*_plugins()).run(Request(question=QUESTION, excluded=frozenset({"kb-a"})), UnitView()))
    assert _summary(events) == _summary(fresh)
    assert _of(events, AnswerReady)[0].evidence_ids == ("u2",)


def test_pinning_at_a_stage_start_reorders_what_is_ahead_like_a_fresh_pinned_run() -> None:
    steering = Steering()
    run = _engine(*_plugins()).run(Request(question=QUESTION), UnitView(), steering=steering)
    events = _pull_until(run, lambda e: isinstance(e, StageStarted) and e.stage == "kb")
    steering.intervene(Intervention(kind="pin_plugin", target="kb-b", stage="kb"))
    events += list(run)
    fresh = list(_engine(*_plugins()).run(Request(question=QUESTION, pins={"kb": "kb-b"}), UnitView()))
    assert _summary(events) == _summary(fresh)
    assert [p for s, p, _ in _called(events) if s == "kb"] == ["kb-b"]


def test_a_pin_made_at_another_candidate_defers_it_as_a_fallback() -> None:
    steering = Steering()
    plugins = (Seed(), Kb("kb-a", ids=("u1",)), Kb("kb-b", Status.INSUFFICIENT, ()), Gs("gs-a"), Val())
    run = _engine(*plugins).run(Request(question=QUESTION), UnitView(), steering=steering)
    events = _pull_until(run, lambda e: isinstance(e, AttemptStarted) and e.plugin == "kb-a")
    steering.intervene(Intervention(kind="pin_plugin", target="kb-b", stage="kb"))
    events += list(run)
    kb_rows = [(e.plugin, e.status) for e in _of(events, AttemptFinished) if e.stage == "kb"]
    assert kb_rows == [("kb-a", "skipped"), ("kb-b", "insufficient"), ("kb-a", "success")]


def test_excluding_a_unit_before_retrieval_narrows_the_view_the_kb_plugin_ranks() -> None:
    steering = Steering()
    plugins = (Seed(), ViewKb("kb-a", ids=("u1", "u2")), Gs("gs-a"), Val())
    run = _engine(*plugins).run(Request(question=QUESTION), UnitView(), steering=steering)
    events = _pull_until(run, lambda e: isinstance(e, AttemptStarted) and e.plugin == "kb-a")
    steering.intervene(Intervention(kind="exclude_unit", target="u1"))
    events += list(run)
    assert _of(events, AnswerReady)[0].evidence_ids == ("u2",)
    fresh = list(
        _engine(Seed(), ViewKb("kb-a", ids=("u1", "u2")), Gs("gs-a"), Val()).run(
            Request(question=QUESTION, excluded_units=frozenset({"u1"})), UnitView()
        )
    )
    assert _summary(events) == _summary(fresh)


def test_an_intent_written_at_the_seed_stage_replaces_seed_detection() -> None:
    steering = Steering()
    seed = Seed()
    seed.calls = 0
    run = _engine(seed, *_plugins()[1:]).run(Request(question=QUESTION), UnitView(), steering=steering)
    events = _pull_until(run, lambda e: isinstance(e, AttemptStarted) and e.stage == "sd")
    steering.intervene(Intervention(kind="edit_intent", target=USER_INTENT))
    events += list(run)
    detected = _of(events, IntentDetected)[0]
    assert detected.plugin == "user" and detected.intents[0].target == "the pumps"
    assert [(e.plugin, e.status) for e in _of(events, AttemptFinished) if e.stage == "sd"] == [("sd-a", "skipped")]
    assert _of(events, AnswerReady)[0].status == "grounded"


def test_an_invalid_user_intent_fails_the_revision_with_the_parser_message() -> None:
    events = list(_engine(*_plugins()).run(Request(question=QUESTION, intent_cnl="@i1 intent nonsense"), UnitView()))
    answer = _of(events, AnswerReady)[0]
    assert answer.status == "no-context" and "the user's intent is invalid" in answer.answer


def test_cancelling_during_a_slow_plugin_ends_the_run_as_cancelled() -> None:
    steering = Steering()
    slow = Seed(sleep=30.0)
    run = _engine(slow, *_plugins()[1:], timeout_ms=60_000).run(
        Request(question=QUESTION), UnitView(), steering=steering
    )
    threading.Timer(0.1, steering.cancel).start()
    events = list(run)
    slow.wake.set()
    finished = _of(events, AttemptFinished)
    assert (finished[0].plugin, finished[0].status, finished[0].reason) == ("sd-a", "error", "cancelled by the user")
    assert isinstance(events[-1], RunFinished) and events[-1].status == "cancelled"
    assert _of(events, AnswerReady) == []


def test_a_rerun_records_its_interventions_as_events_that_round_trip(tmp_path: Path) -> None:
    request = apply(Request(question=QUESTION), Intervention(kind="exclude_plugin", target="kb-a"))
    assert request.excluded == frozenset({"kb-a"}) and len(request.interventions) == 1
    events = list(_engine(*_plugins()).run(request, UnitView()))
    assert isinstance(events[1], Intervened) and events[1].live is False
    assert "applied from the start" in events[1].note
    path = tmp_path / "trace.jsonl"
    write_trace(events, path)
    again, problems = read_trace(path)
    assert problems == [] and again == events


def test_apply_pin_clears_an_exclusion_and_exclude_clears_a_pin() -> None:
    request = Request(question=QUESTION, pins={"kb": "kb-a"})
    excluded = apply(request, Intervention(kind="exclude_plugin", target="kb-a"))
    assert excluded.pins == {} and excluded.excluded == frozenset({"kb-a"})
    pinned = apply(excluded, Intervention(kind="pin_plugin", target="kb-a", stage="kb"))
    assert pinned.pins == {"kb": "kb-a"} and pinned.excluded == frozenset()
