"""A grounded answer shows ✓ only beside a validator's verdict (mrptui/answer_verdict.py): without
one the answer and the status line say that none ran, or why none gave one."""

from __future__ import annotations

from fake_runs import short_answer_run, thinkingdb_run
from textual.content import Content

from core.kernel.contract import Request
from core.kernel.events import AttemptFinished, Validated
from mrptui.state import reduce
from mrptui.widgets.answer import answer_markdown, render_answer
from mrptui.widgets.status import status_markup


def plain(markup: str) -> str:
    return Content.from_markup(markup).plain


def status_of(events: list) -> str:
    state = reduce(events)
    return plain(status_markup(state, len(events), live=False, paused_at=None, breakpoints=(), replay=False, label=""))


def test_a_validated_answer_names_its_validator() -> None:
    events = thinkingdb_run(Request(question="which tools are relevant for data pipelines"))
    shown = plain(render_answer(reduce(events)))
    assert shown.startswith("✓ grounded · accepted by val-grounded")
    assert "✓ grounded" in status_of(events)
    assert "**Status:** grounded (accepted by val-grounded)" in answer_markdown(reduce(events))


def test_an_answer_no_validator_saw_has_no_check_mark() -> None:
    events = short_answer_run(Request(question="which tool runs the nightly pipelines"))
    shown = plain(render_answer(reduce(events)))
    assert shown.startswith("○ grounded · not validated: no validator ran") and "✓ grounded" not in shown
    assert "○ grounded, not validated" in status_of(events) and "✓" not in status_of(events)
    assert "**Status:** grounded (not validated: no validator ran)" in answer_markdown(reduce(events))


def test_validators_that_gave_no_verdict_are_named_with_what_they_said() -> None:
    events = [
        AttemptFinished(stage="val", plugin="val-grounded", status="unsupported", reason="no LLM endpoint", revision=1)
        if isinstance(e, AttemptFinished) and e.stage == "val"
        else e
        for e in thinkingdb_run(Request(question="which tools are relevant for data pipelines"))
        if not isinstance(e, Validated)
    ]
    shown = plain(render_answer(reduce(events)))
    assert shown.startswith(
        "○ grounded · not validated: no validator gave a verdict (val-grounded unsupported: no LLM endpoint)"
    )


def test_a_verdict_on_another_plan_revision_does_not_vouch_for_this_answer() -> None:
    events = [
        e.model_copy(update={"revision": 0}) if isinstance(e, Validated) else e
        for e in thinkingdb_run(Request(question="which tools are relevant for data pipelines"))
    ]
    assert plain(render_answer(reduce(events))).startswith("○ grounded · not validated")
