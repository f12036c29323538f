"""What every evaluation report must show, whichever question set it ran."""

from __future__ import annotations

from core.eval.labelled_report import EvalReport
from core.kernel.contract import INSUFFICIENT_PREFACE


def assert_weak_answers_say_so(report: EvalReport) -> None:
    """An answer opens with the insufficient preface exactly when its status is weak: the status
    matches the words on every question, under every fusion."""
    for result in report.queries:
        says_insufficient = result.answer.startswith(INSUFFICIENT_PREFACE)
        assert says_insufficient == (result.status == "weak"), (
            result.id,
            result.fusion,
            result.status,
            result.answer[:80],
        )
