"""Hardening of the kernel against misbehaving plugins: one that raises, one that hangs past its
timeout, one that returns something malformed. Whatever a plugin does, the run ends with an
AnswerReady and a RunFinished, and the bad attempt is an `error` whose reason is in the trace.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import pytest

from core.kernel.contract import (
    GsResult,
    KbResult,
    SdResult,
    Status,
    ValResult,
)
from core.kernel.events import AttemptFinished, Backtracked
from core.question.intent_cues import question_cues, split_input
from tests.support.scripted_engine import GOOD, INTENT, STAGES, engine_with, run_to_end
from tests.support.time_limits import HANG_SECONDS, time_limit

RESULT_NAMES = {"sd": "SdResult", "kb": "KbResult", "gs": "GsResult", "val": "ValResult"}
# A status that exists but is not one this family may return.
FOREIGN_STATUS: dict[str, Callable[[], object]] = {
    "sd": lambda: SdResult(status=Status.INSUFFICIENT),
    "kb": lambda: KbResult(status=Status.ACCEPTED),
    "gs": lambda: GsResult(status=Status.REJECTED),
    "val": lambda: ValResult(status=Status.SUCCESS),
}
OTHER_FAMILY = {"sd": "gs", "kb": "val", "gs": "sd", "val": "kb"}


def bad_attempts(events: list, stage: str) -> list[AttemptFinished]:
    """The calls made to the bad plugins (a replan skips one already tried on identical evidence)."""
    return [
        e
        for e in events
        if isinstance(e, AttemptFinished) and e.stage == stage and e.plugin.endswith("-bad") and e.status != "skipped"
    ]


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at teardown, so plugins that 'hang' finish in the background instead of lingering."""
    event = threading.Event()
    yield event
    event.set()


def _raises() -> object:
    raise RuntimeError("index corrupted")


def misbehaviours(stage: str, release: threading.Event) -> dict[str, tuple[Callable[[], object], str]]:
    """name -> (behaviour, text the error reason must contain)."""

    def hang() -> object:
        release.wait(10)
        return GOOD[stage]()

    other = OTHER_FAMILY[stage]
    return {
        "raises": (_raises, "raised RuntimeError: index corrupted"),
        "hangs": (hang, "cancelled: timed out after 50 ms (pluginTimeoutMs)"),
        "returns-none": (lambda: None, f"returned NoneType, not {RESULT_NAMES[stage]}"),
        "returns-dict": (lambda: {"status": "success"}, f"returned dict, not {RESULT_NAMES[stage]}"),
        "returns-other-family": (GOOD[other], f"returned {RESULT_NAMES[other]}, not {RESULT_NAMES[stage]}"),
        "foreign-status": (FOREIGN_STATUS[stage], f"not valid for {stage}"),
    }


KINDS = ("raises", "hangs", "returns-none", "returns-dict", "returns-other-family", "foreign-status")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("stage", STAGES)
def test_a_bad_plugin_is_an_error_and_the_next_candidate_answers(stage: str, kind: str, release) -> None:
    behave, reason = misbehaviours(stage, release)[kind]
    events = run_to_end(engine_with({stage: behave}, timeout_ms=50 if kind == "hangs" else 2000))
    [attempt] = bad_attempts(events, stage)
    assert attempt.status == "error" and reason in attempt.reason
    [backtrack] = [e for e in events if isinstance(e, Backtracked)]
    assert (backtrack.level, backtrack.stage, backtrack.plugin) == (1, stage, f"{stage}-bad")
    assert reason in backtrack.reason and f"trying {stage}-good" in backtrack.reason
    assert events[-2].status == events[-1].status == "grounded"
    assert events[-2].answer == "Disk pressure."


@pytest.mark.parametrize("kind", KINDS)
def test_every_plugin_bad_still_ends_with_an_answer(kind: str, release) -> None:
    bad = {stage: misbehaviours(stage, release)[kind][0] for stage in STAGES}
    events = run_to_end(engine_with(bad, timeout_ms=50 if kind == "hangs" else 2000, with_good=False))
    # No seed detector worked, so each plan revision stops after sd and the answer is no-context.
    assert {(e.stage, e.status) for e in events if isinstance(e, AttemptFinished)} == {("sd", "error")}
    assert events[-2].status == events[-1].status == "no-context"
    assert [e.level for e in events if isinstance(e, Backtracked)] == [2, 3]


@pytest.mark.parametrize("stage", ["kb", "gs", "val"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_stage_with_only_bad_plugins_degrades_instead_of_failing(stage: str, kind: str, release) -> None:
    behave = misbehaviours(stage, release)[kind][0]
    events = run_to_end(engine_with({stage: behave}, timeout_ms=50 if kind == "hangs" else 2000, with_good=False))
    assert all(a.status == "error" for a in bad_attempts(events, stage))
    # Without evidence the solver still answers (weak); without a solver or a verdict nothing is grounded.
    expected = {"kb": "weak", "gs": "no-context", "val": "grounded"}[stage]
    assert events[-2].status == expected


# --- results of the right type whose fields are malformed ----------------------------------------

MALFORMED_FIELDS = {
    "status-as-plain-str": ("sd", lambda: SdResult(status="success", intents=(INTENT,))),
    "kb-status-as-plain-str": ("kb", lambda: KbResult(status="insufficient")),
    "reason-none": ("sd", lambda: SdResult(status=Status.UNSUPPORTED, reason=None)),
    "intents-none": ("sd", lambda: SdResult(status=Status.SUCCESS, intents=None)),
    "intents-not-intents": ("sd", lambda: SdResult(status=Status.SUCCESS, intents=("explain x",))),
    "context-units-not-units": ("sd", lambda: SdResult(status=Status.SUCCESS, intents=(INTENT,), context_units=("u",))),
    "llm-calls-none": ("gs", lambda: GsResult(status=Status.ERROR, llm_calls=None)),
    "trace-not-events": ("kb", lambda: KbResult(status=Status.INSUFFICIENT, trace=("scored",))),
    "cited-ids-none": ("gs", lambda: GsResult(status=Status.SUCCESS, answer="x", cited_ids=None)),
    "answer-not-text": ("gs", lambda: GsResult(status=Status.SUCCESS, answer=42)),
}


@pytest.mark.parametrize("case", MALFORMED_FIELDS)
def test_a_result_with_malformed_fields_is_an_error(case: str) -> None:
    stage, behave = MALFORMED_FIELDS[case]
    events = run_to_end(engine_with({stage: behave}))
    [attempt] = bad_attempts(events, stage)
    assert attempt.status == "error"
    assert events[-2].status == "grounded"


# --- the kernel's own work on the question -------------------------------------------------------


def test_a_question_with_a_long_whitespace_run_does_not_hang_the_kernel() -> None:
    with time_limit(HANG_SECONDS):
        run_to_end(engine_with({}), question="Why does Helix" + " " * 1500 + "stall?")


GAP = " " * 100_000


@pytest.mark.parametrize(
    ("question", "compared"),
    [
        (f"Is Helix{GAP}fast or{GAP}Vault?", ("Helix fast", "Vault")),
        ("the node " * 12_500 + "or Vault?", ("node", "Vault")),
        ("between " * 12_500 + "Helix or Vault?", ("Helix", "Vault")),
        ("compare " * 12_500 + "Helix or Vault?", ("Helix", "Vault")),
        ("the node " * 12_500 + "is slow?", ()),
    ],
    ids=["whitespace", "words", "between", "compare", "no-comparison"],
)
def test_comparisons_in_long_questions_are_found_in_linear_time(question: str, compared: tuple[str, ...]) -> None:
    with time_limit(HANG_SECONDS):
        cues = question_cues(question)
    assert cues.compared == compared


@pytest.mark.parametrize(
    ("text", "split"),
    [
        (
            f"Given{GAP}Orion uses Helix,{GAP}why does it stall;{GAP}also{GAP}who owns it?",
            (["Orion uses Helix."], ["Why does it stall?", "Who owns it?"]),
        ),
        (f"Given{GAP}Orion uses Helix{GAP}why?", ([], [f"Given{GAP}Orion uses Helix{GAP}why?"])),
        (f"What is Orion{GAP}and also{GAP}who owns it?", ([], ["What is Orion?", "Who owns it?"])),
        (f"What is Orion{GAP}for?", ([], [f"What is Orion{GAP}for?"])),
    ],
    ids=["lead-clause", "no-comma", "and-also", "no-sub-question"],
)
def test_long_whitespace_runs_split_in_linear_time(text: str, split: tuple[list[str], list[str]]) -> None:
    with time_limit(HANG_SECONDS):
        assert split_input(text) == split
