"""The answer pane says when a budget stopped a closure, under the answer's status, from the
events alone (the proofs pane names the stop too); so does the answer's Markdown export."""

from __future__ import annotations

from core.kernel.events import AnswerReady, ProofsFound, RunFinished
from mrptui.state import reduce
from mrptui.widgets.answer import answer_markdown, render_answer

STOPPED = "kb-thinkingdb stopped deriving at maxClosureMb=1024: the answer may be incomplete"


def test_a_budget_stop_is_said_under_the_answers_status() -> None:
    answer = AnswerReady(answer="Yes.", status="grounded")
    lines = render_answer(
        reduce([ProofsFound(plugin="kb-thinkingdb", stop_reason="budget: maxClosureMb=1024"), answer])
    ).splitlines()
    assert STOPPED in lines[1] and lines[2] == ""
    unstopped = reduce([ProofsFound(plugin="kb-thinkingdb", stop_reason="budget: maxDepth=4"), answer])
    assert "may be incomplete" not in render_answer(unstopped)


def test_a_run_without_an_answer_says_the_budget_stop_too() -> None:
    events = [
        ProofsFound(plugin="kb-thinkingdb", stop_reason="budget: maxClosureMb=1024"),
        RunFinished(status="failed"),
    ]
    assert STOPPED in render_answer(reduce(events))


def test_the_markdown_export_says_the_budget_stop_under_the_status() -> None:
    answer = AnswerReady(answer="Yes.", status="grounded")
    stopped = answer_markdown(
        reduce([ProofsFound(plugin="kb-thinkingdb", stop_reason="budget: maxClosureMb=1024"), answer])
    )
    assert stopped.splitlines()[2:6] == [
        "**Status:** grounded (not validated: no validator ran)",
        "",
        f"**Budget:** {STOPPED}  ",
        "",
    ]
    unstopped = answer_markdown(reduce([ProofsFound(plugin="kb-thinkingdb", stop_reason="fixpoint"), answer]))
    assert unstopped.splitlines()[2:5] == ["**Status:** grounded (not validated: no validator ran)", "", "Yes."]
