"""The view model is a pure function of the first k events: one test per event kind, and more."""

from __future__ import annotations

import pytest
from fake_kb import CALLER, U_AIRFLOW, U_DAG, U_RETRY
from fake_runs import replan_run, thinkingdb_run

from core.kernel.contract import Request
from core.kernel.events import (
    AnswerPart,
    AnswerReady,
    AttemptFinished,
    AttemptStarted,
    Backtracked,
    IntentDetected,
    Intervened,
    PlanBuilt,
    PlanStage,
    ProofsFound,
    RetrievalScored,
    RunFinished,
    RunStarted,
    StageStarted,
    Validated,
)
from core.kernel.steering import Intervention
from core.kernel.steering import apply as intervene
from core.units import Intent
from mrptui.breakpoints import Breakpoint, next_stop
from mrptui.state import RunRecord, StateCache, TimelineRow, ViewState, apply, reduce

START = RunStarted(
    question="why?",
    caller_tags=("staff",),
    caller_region="eu",
    as_of="2026-01-15",
    kb_version="kb-1",
    pins={"kb": "kb-fast"},
    excluded=("sd-llm-fast",),
)
PLAN1 = PlanBuilt(
    revision=1,
    planner="planner-default",
    stages=(PlanStage(stage="kb", candidates=("kb-fast", "kb-balanced")),),
    reasons=("cheap-first",),
)
PLAN2 = PlanBuilt(revision=2, planner="planner-depth", stages=(PlanStage(stage="kb", candidates=("kb-thinkingdb",)),))


def scored(plugin: str = "kb-fast", intent: int = 0) -> RetrievalScored:
    return RetrievalScored(
        plugin=plugin,
        intent_index=intent,
        act="explain",
        query_terms=("x",),
        lanes=("bm25",),
        sufficient=True,
        total_candidates=0,
        candidates=(),
        evidence_ids=(),
    )


def test_empty_state_is_idle():
    state = reduce([])
    assert state == ViewState()
    assert state.status == "idle" and state.k == 0 and state.plan is None and state.proofs is None


def test_run_started_resets_and_records_the_request():
    stale = reduce([START, PLAN1])
    state = apply(stale, START)
    assert state.k == 3
    assert state.question == "why?" and state.status == "running"
    assert state.caller_tags == ("staff",) and state.caller_region == "eu" and state.as_of == "2026-01-15"
    assert state.kb_version == "kb-1"
    assert state.pins == (("kb", "kb-fast"),) and state.excluded == ("sd-llm-fast",)
    assert state.plans == () and state.rows == ()


def test_plan_built_adds_a_revision_and_a_timeline_row():
    state = reduce([START, PLAN1])
    assert state.plan is not None and state.plan.planner == "planner-default" and state.revision == 1
    assert state.plan.stages[0].candidates == ("kb-fast", "kb-balanced")
    assert state.rows == (
        TimelineRow(kind="plan", index=1, plugin="planner-default", revision=1, reason="cheap-first"),
    )


def test_replan_keeps_the_old_plan_marked_superseded_with_the_reason():
    back = Backtracked(level=2, stage="val", plugin="val-grounded", reason="rejected: no citation")
    state = reduce([START, PLAN1, back, PLAN2])
    assert [p.revision for p in state.plans] == [1, 2]
    assert state.plans[0].superseded and state.plans[0].superseded_reason == "rejected: no citation"
    assert not state.plans[1].superseded
    assert state.plan.planner == "planner-depth" and state.revision == 2


def test_replan_without_a_level_two_backtrack_still_supersedes():
    state = reduce([START, PLAN1, PLAN2])
    assert state.plans[0].superseded and state.plans[0].superseded_reason == "replanned"


def test_stage_started_sets_the_current_stage_and_intent():
    state = reduce([START, PLAN1, StageStarted(stage="kb", revision=1, intent_index=2)])
    assert state.current_stage == "kb" and state.current_plugin is None and state.current_intent == 2


def test_attempt_started_adds_a_running_row():
    state = reduce([START, PLAN1, AttemptStarted(stage="kb", plugin="kb-fast", revision=1, intent_index=1)])
    row = state.rows[-1]
    assert (row.kind, row.stage, row.plugin, row.status, row.revision, row.intent_index, row.index) == (
        "attempt",
        "kb",
        "kb-fast",
        "running",
        1,
        1,
        2,
    )
    assert state.current_plugin == "kb-fast"


def test_attempt_finished_closes_the_matching_running_row():
    events = [
        START,
        AttemptStarted(stage="kb", plugin="kb-fast", revision=1),
        AttemptStarted(stage="kb", plugin="kb-fast", revision=1, intent_index=1),
        AttemptFinished(stage="kb", plugin="kb-fast", status="insufficient", reason="1 unit", ms=1.5),
    ]
    state = reduce(events)
    first, second = state.attempts
    assert (first.status, first.reason, first.ms) == ("insufficient", "1 unit", 1.5)
    assert second.status == "running"  # intent 1 is still running


def test_attempt_finished_without_a_start_appends_a_row():
    state = reduce([START, AttemptFinished(stage="gs", plugin="gs-symbolic", status="success")])
    assert state.rows[-1].status == "success" and state.rows[-1].index == -1


def test_intent_detected_records_cnl_and_intents():
    intent = Intent(act="explain", target="x", output="text")
    state = reduce(
        [
            START,
            IntentDetected(
                plugin="sd-symbolic", cnl='@i1 intent explain "x"', intents=(intent,), context_unit_ids=("turn::1",)
            ),
        ]
    )
    assert state.intent_plugin == "sd-symbolic" and state.intents == (intent,)
    assert state.intent_cnl.startswith("@i1") and state.context_unit_ids == ("turn::1",)


def test_retrieval_scored_keeps_all_and_the_latest_per_intent():
    a, b, c = scored("kb-fast", 0), scored("kb-balanced", 0), scored("kb-fast", 1)
    state = reduce([START, a, b, c])
    assert state.retrievals == (a, b, c)
    assert state.evidence == {0: b, 1: c}
    assert state.evidence_by_plugin == {"kb-fast": (a, c), "kb-balanced": (b,)}
    assert state.latest_retrieval is c


def test_proofs_found_latest_wins():
    p1 = ProofsFound(plugin="kb-thinkingdb", stop_reason="fixpoint")
    p2 = ProofsFound(plugin="kb-thinkingdb", stop_reason="limit", intent_index=1)
    state = reduce([START, p1, p2])
    assert state.proofs is p2 and state.proofs_all == (p1, p2)


def test_backtracked_adds_an_inline_row_at_each_level():
    events = [
        START,
        PLAN1,
        Backtracked(level=1, stage="kb", plugin="kb-fast", revision=1, reason="why1"),
        Backtracked(level=2, stage="plan", plugin="planner-default", revision=1, reason="why2"),
        Backtracked(level=3, stage="answer", plugin="planner-default", revision=1, reason="why3"),
    ]
    state = reduce(events)
    rows = [r for r in state.rows if r.kind == "backtrack"]
    assert [r.level for r in rows] == [1, 2, 3]
    assert [r.label for r in rows] == [
        "↩ L1 next candidate after kb-fast (r1): why1",
        "⟲ L2 replan after planner-default r1: why2",
        "≈ L3 weak answer from r1 (planner-default): why3",
    ]
    assert len(state.backtracks) == 3


def test_validated_is_recorded():
    v = Validated(plugin="val-grounded", status="rejected", reason="no citation")
    assert reduce([START, v]).validations == (v,)


def test_answer_ready_sets_the_answer():
    answer = AnswerReady(
        answer="A.",
        status="weak",
        evidence_ids=("u1",),
        parts=(AnswerPart(intent_index=0, target="t", answer="A.", status="weak"),),
    )
    state = reduce([START, answer])
    assert state.answer is answer and state.status == "running"


def test_run_finished_sets_the_final_status():
    state = reduce([START, StageStarted(stage="kb", revision=1), RunFinished(status="no-context", replans=1)])
    assert state.status == "no-context" and state.done and state.finished.replans == 1
    assert state.current_stage is None


def test_reduce_is_pure_and_prefixes_are_consistent():
    events = thinkingdb_run(Request("which tools are relevant for data pipelines", caller=CALLER))
    full = reduce(events)
    assert full.status == "grounded" and full.k == len(events)
    for k in range(len(events) + 1):
        incremental = reduce(events[k:], reduce(events[:k]))
        assert incremental == full
    assert reduce(events) == full  # no hidden state between calls


def test_thinkingdb_run_shape():
    state = reduce(thinkingdb_run(Request("q", caller=CALLER)))
    assert [r.plugin for r in state.attempts] == [
        "sd-llm-fast",
        "sd-symbolic",
        "kb-fast",
        "kb-thinkingdb",
        "gs-symbolic",
        "val-grounded",
    ]
    assert [b.level for b in state.backtracks] == [1, 1]
    assert state.evidence[0].plugin == "kb-thinkingdb"
    assert state.proofs is not None and state.proofs.proofs[0].fact == "airflow relevant_for data pipelines"
    assert state.answer.evidence_ids == (U_AIRFLOW, U_DAG, U_RETRY)
    assert state.attempt_status(1, "kb", "kb-fast") == "insufficient"
    assert state.attempt_status(1, "kb", "kb-balanced") is None


def test_replan_run_shape():
    state = reduce(replan_run(Request("compare airflow and luigi", caller=CALLER)))
    assert [p.superseded for p in state.plans] == [True, False]
    assert [b.level for b in state.backtracks] == [1, 2, 1, 3]
    assert state.status == "weak" and state.answer.status == "weak"


def test_state_cache_matches_reduce():
    events = thinkingdb_run(Request("q", caller=CALLER))
    cache = StateCache()
    for k in (5, 2, len(events), 0, 100):
        assert cache.at(events, k) == reduce(events[: max(0, min(k, len(events)))])


def test_run_record_question_falls_back_to_the_trace():
    events = thinkingdb_run(Request("from the trace", caller=CALLER))
    record = RunRecord(1, None, list(events), done=True)
    assert record.question == "from the trace"
    assert record.final.status == "grounded"


@pytest.mark.parametrize(
    ("point", "expected_kind"),
    [
        (Breakpoint("stage", "kb"), "stage_started"),
        (Breakpoint("plugin", "kb-thinkingdb"), "attempt_started"),
        (Breakpoint("backtrack"), "backtracked"),
    ],
)
def test_breakpoints_stop_just_after_the_matching_event(point, expected_kind):
    events = thinkingdb_run(Request("q", caller=CALLER))
    stop, hit = next_stop(events, 0, [point], backtracks=False)
    assert hit == point and events[stop - 1].kind == expected_kind
    again, _ = next_stop(events, stop, [point], backtracks=False)
    assert again > stop  # continuing from the stop does not hit the same event again


def test_continue_stops_at_backtracks_and_runs_off_the_end():
    events = thinkingdb_run(Request("q", caller=CALLER))
    first, hit = next_stop(events, 0, [], backtracks=True)
    assert events[first - 1].kind == "backtracked" and hit == Breakpoint("backtrack")
    second, _ = next_stop(events, first, [], backtracks=True)
    assert second > first and events[second - 1].kind == "backtracked"
    assert next_stop(events, second, [], backtracks=True) == (len(events), None)


def test_interventions_pin_and_exclude_on_a_copy_of_the_request():
    base = Request(
        "q", caller=CALLER, pins={"sd": "sd-symbolic"}, excluded=frozenset({"kb-fast"}), planner="planner-depth"
    )
    pinned = intervene(base, Intervention(kind="pin_plugin", target="kb-fast", stage="kb"))
    assert pinned.pins == {"sd": "sd-symbolic", "kb": "kb-fast"} and pinned.excluded == frozenset()
    excluded = intervene(base, Intervention(kind="exclude_plugin", target="sd-symbolic"))
    assert excluded.pins == {} and excluded.excluded == frozenset({"kb-fast", "sd-symbolic"})
    assert excluded.planner == "planner-depth" and len(excluded.interventions) == 1
    assert base.pins == {"sd": "sd-symbolic"}  # the original is untouched


def test_plugin_breakpoint_matches_the_planner_of_a_plan():
    assert Breakpoint("plugin", "planner-depth").matches(PLAN2)
    assert not Breakpoint("plugin", "planner-depth").matches(PLAN1)


def test_an_intervention_becomes_a_timeline_row_that_says_how_it_applied():
    events = thinkingdb_run(Request("q", caller=CALLER))
    change = Intervened(change="exclude_plugin", target="kb-fast", live=True, note="kb-fast excluded by the user")
    state = reduce([*events[:5], change])
    row = state.rows[-1]
    assert (row.kind, row.plugin, row.status) == ("intervention", "you", "live")
    assert row.label == "✎ kb-fast excluded by the user"
