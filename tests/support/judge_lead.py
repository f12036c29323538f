"""The LEAD that ../shared/qa/squad2-dev/judge.py reads from an answer's text, for the tests that
check the evaluation's leads (read from the answer's structure, core/eval/answer_checks.py) agree
with it. Only tests parse our answers' text this way."""

from __future__ import annotations

from core.eval.answer_checks import first_line, first_sentence


def judge_lead(answer: str) -> str:
    """The judge's rule: the first line (preface and citations removed) before ", because:", else
    before " because:", else the first sentence."""
    line = first_line(answer)
    for marker in (", because:", " because:"):
        if marker in line:
            return line.split(marker, 1)[0].strip()
    return first_sentence(answer)
