"""How a run numbers its events: the kernel's own built with their seq, a plugin's relayed as a copy."""

from __future__ import annotations

import time

from core.infra.cancel import CallBudget
from core.kernel.call_budgets import RequestGuard
from core.kernel.contract import Request
from core.kernel.events import StageStarted, Validated
from core.kernel.run_state import RunState


def _run_state() -> RunState:
    return RunState(
        request=Request(question="why?"),
        view=None,
        services=None,
        llm_budget=CallBudget(1),
        deadline=time.monotonic() + 60,
        clock=time.perf_counter,
        guard=RequestGuard(100),
    )


def test_events_are_numbered_in_the_order_they_are_emitted() -> None:
    run = _run_state()
    first = list(run.emit(StageStarted, stage="kb", revision=0))
    second = list(run.emit(StageStarted, stage="gs", revision=0, intent_index=1))
    assert [(e.seq, e.stage, e.intent_index) for e in first + second] == [(1, "kb", 0), (2, "gs", 1)]
    # Built with its seq, the event dumps as one built first and numbered after.
    numbered_after = StageStarted(stage="kb", revision=0).model_copy(update={"seq": 1})
    assert first[0].model_dump_json() == numbered_after.model_dump_json()


def test_a_relayed_event_is_a_numbered_copy_and_the_original_stays_as_built() -> None:
    """A kb result's events are relayed again on a replan (the engine's kb cache): each relay numbers
    its own copy, and the plugin's event is never changed."""
    run = _run_state()
    list(run.emit(StageStarted, stage="kb", revision=0))
    plugin_event = Validated(plugin="val-a", status="accepted")
    once = list(run.relay(plugin_event, intent_index=2))
    again = list(run.relay(plugin_event, intent_index=3))
    assert [(e.seq, e.intent_index) for e in once + again] == [(2, 2), (3, 3)]
    assert (plugin_event.seq, plugin_event.intent_index) == (0, 0)
    assert once[0].model_dump_json() == plugin_event.model_copy(update={"intent_index": 2, "seq": 2}).model_dump_json()
