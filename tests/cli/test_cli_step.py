"""`mrptui ask --step` / `--break`: the debugger in a plain terminal, driven by lines on stdin."""

from __future__ import annotations

import io
import json

import pytest

from core.kernel.events import Backtracked
from mrptui.cli import main
from mrptui.run_points import describe_point

QUESTION = "What is Orion?"


def _ask(capsys, monkeypatch, stdin: str, *argv: str) -> tuple[int, str, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(["ask", QUESTION, *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_break_holds_before_the_plugin_and_x_excludes_it_live(capsys, monkeypatch) -> None:
    code, out, err = _ask(capsys, monkeypatch, "x kb-fast\ng\n", "--break", "kb:kb-fast", "--json")
    assert code == 0
    assert "⏸ held before kb-fast (stage kb, revision 0)" in err
    assert "kb-fast excluded by the user: applied when the run goes on" in err
    summary = json.loads(out)
    kb = [(a["plugin"], a["status"]) for a in summary["attempts"] if a["stage"] == "kb"]
    assert kb[0] == ("kb-fast", "skipped") and kb[1][0] != "kb-fast"
    assert summary["status"] in ("grounded", "weak")


def test_step_holds_after_every_event_and_end_of_input_runs_to_the_end(capsys, monkeypatch) -> None:
    code, out, err = _ask(capsys, monkeypatch, "n\nn\n", "--step")
    assert code == 0
    assert err.count("⏸ held") == 3  # two steps answered, the third prompt meets end of input
    assert "g (end of input)" in err and "status: grounded" in out


def test_an_intervention_on_what_already_ran_is_refused_with_the_reason(capsys, monkeypatch) -> None:
    _, _, err = _ask(capsys, monkeypatch, "n\nx sd-symbolic\ng\n", "--break", "kb")
    assert "cannot apply live: sd-symbolic has already run" in err


def test_q_cancels_and_the_status_says_so(capsys, monkeypatch) -> None:
    code, out, err = _ask(capsys, monkeypatch, "q\n", "--break", "sd", "--json")
    assert code == 0 and json.loads(out)["status"] == "cancelled"
    assert "run_finished" in err


@pytest.mark.parametrize("spec", ["nope:kb-fast", "kb:", "kb-fsat", "kb:nope", "\x1b[2J"])
def test_a_bad_break_spec_is_a_usage_error(capsys, monkeypatch, spec) -> None:
    code, _, err = _ask(capsys, monkeypatch, "", "--break", spec)
    assert code == 2 and "--break" in err


@pytest.mark.parametrize(
    ("level", "plugin", "said"),
    [
        (1, "kb-fast", "after the L1 backtrack: next candidate after kb-fast (stage kb, revision 0)"),
        (2, "planner-default", "after the L2 backtrack: replan after planner-default (revision 0)"),
        (3, "planner-default", "after the L3 backtrack: weak answer from revision 0 (planner-default)"),
    ],
)
def test_a_hold_at_a_backtrack_is_said_as_the_timeline_says_it(level, plugin, said) -> None:
    """Held at a backtrack, the status line and `--step` said "held after backtracked" (the event's kind)."""
    event = Backtracked(level=level, stage="kb" if level == 1 else "plan", plugin=plugin, reason="…", revision=0)
    assert describe_point(event) == said
