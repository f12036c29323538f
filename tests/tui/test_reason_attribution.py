"""Explanations cannot be misattributed: every reason the plan panel and the timeline show names
only plugins of the row it is on (a folded "not reached" row: of the stage it folds), every candidate ends explained, and every backtrack names its
plugin and plan revision. Runs the real engine on the bundled sample_kb queries."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from textual.content import Content

from core.kernel.contract import Request
from core.kernel.session import Session
from core.units import Caller
from mrptui.state import reduce
from mrptui.widgets.plan import _stage_lines
from mrptui.widgets.timeline import Fold, fold_key, fold_rows

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = [q["question"] for q in json.loads((ROOT / "sample_kb" / "queries.json").read_text())]
SESSION = Session.open()
PLUGINS = SESSION.plugin_ids()
ALL_IDS = sorted({pid for ids in PLUGINS.values() for pid in ids}, key=len, reverse=True)


def _named(text: str) -> set[str]:
    """The plugin ids a reason mentions (longest first, so `kb-fast` does not hide in `kb-fast-x`)."""
    found = set()
    for pid in ALL_IDS:
        pattern = rf"(?<![\w-]){re.escape(pid)}(?![\w-])"
        if re.search(pattern, text):
            found.add(pid)
            text = re.sub(pattern, " ", text)
    return found


def _stage_ids() -> dict[str, list[str]]:
    """Stage name -> plugin ids of that stage, as the session names them."""
    return {stage: ids for stage, ids in PLUGINS.items() if stage in {"sd", "kb", "gs", "val"}}


requests = st.builds(
    lambda question, pins, excluded: Request(
        question=question,
        caller=Caller(),
        excluded=excluded,
        pins={stage: pid for stage, pid in pins.items() if pid not in excluded},
    ),
    st.sampled_from(QUESTIONS),
    st.fixed_dictionaries({}, optional={stage: st.sampled_from(ids) for stage, ids in _stage_ids().items() if ids}),
    st.frozensets(st.sampled_from([pid for ids in _stage_ids().values() for pid in ids]), max_size=2),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests)
def test_every_reason_names_only_plugins_in_its_row(request: Request) -> None:
    state = reduce(list(SESSION.run(request)))
    assert state.done
    for plan in state.plans:
        for stage in plan.stages:
            block = [Content.from_markup(line).plain for line in _stage_lines(plan, stage, state, 0, False)]
            for line in block:
                assert _named(line) <= set(stage.candidates), (plan.revision, stage.stage, line)
            for candidate in stage.candidates:
                row = state.attempt_row(plan.revision, stage.stage, candidate)
                if row is None:
                    continue  # a later stage the run never reached in this revision
                assert row.status != "running" and (row.status != "skipped" or row.reason), row
    revisions = {plan.revision: plan for plan in state.plans}
    for entry in fold_rows(state.rows):  # the timeline as drawn: "not reached" runs folded
        if isinstance(entry, Fold):
            stage = next(s for s in revisions[entry.rows[0].revision].stages if s.stage == entry.rows[0].stage)
            assert set(entry.plugins) <= set(stage.candidates) and _named(entry.text) <= set(stage.candidates), entry
            assert len({fold_key(row) for row in entry.rows}) == 1
    for row in state.rows:
        if row.kind != "backtrack":
            continue
        assert row.plugin and row.revision in revisions, row
        if row.level == 1:
            stage = next(s for s in revisions[row.revision].stages if s.stage == row.stage)
            assert row.plugin in stage.candidates
        else:
            assert row.plugin == revisions[row.revision].planner
        assert row.plugin in row.label and f"r{row.revision}" in row.label
    for validation in state.validations:
        assert validation.revision in revisions


def test_a_stage_that_ended_early_says_which_candidate_was_sufficient() -> None:
    events = list(SESSION.run(Request(question=QUESTIONS[0], caller=Caller(), pins={"kb": "kb-balanced"})))
    state = reduce(events)
    first = state.plans[0]
    kb = next(s for s in first.stages if s.stage == "kb")
    assert kb.candidates[0] == "kb-balanced"
    accepted = state.attempt_row(first.revision, "kb", "kb-balanced")
    assert accepted is not None and accepted.status == "success"
    for other in kb.candidates[1:]:
        row = state.attempt_row(first.revision, "kb", other)
        assert row is not None and row.reason == "not reached: kb-balanced was sufficient"


def test_an_excluded_candidate_is_listed_and_says_so() -> None:
    kb_ids = _stage_ids()["kb"]
    excluded = kb_ids[0]
    state = reduce(list(SESSION.run(Request(question=QUESTIONS[0], caller=Caller(), excluded=frozenset({excluded})))))
    row = state.attempt_row(state.plans[0].revision, "kb", excluded)
    assert row is not None and row.reason == "excluded by the user" and row.outcome == "skipped: excluded by the user"
    assert not any(r.kind == "attempt" and r.plugin == excluded and r.status != "skipped" for r in state.rows)


@pytest.mark.parametrize("pin", ["kb-fast"])
def test_a_solver_already_tried_on_identical_evidence_is_skipped_with_that_reason(pin: str) -> None:
    """A replan that reaches the same kb evidence does not call the same solver again, and says so."""
    for question in QUESTIONS:
        state = reduce(list(SESSION.run(Request(question=question, caller=Caller(), pins={"kb": pin}))))
        skipped = [
            r for r in state.rows if r.kind == "attempt" and r.outcome == "skipped: already tried on identical evidence"
        ]
        if skipped:
            assert all(r.stage == "gs" and r.revision > 0 for r in skipped)
            return
    pytest.fail("no sample query replanned onto identical evidence")
