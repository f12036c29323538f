"""One plan revision's result: its parts (one per sub-question), how good each is, and the
AnswerReady event built from it. The kernel (core/kernel/engine.py) fills these; it picks the best
revision by `score` and answers from it."""

from __future__ import annotations

from dataclasses import dataclass, field

from core.kernel.contract import INSUFFICIENT_PREFACE, GsResult, KbResult, Status, ValResult
from core.kernel.events import AnswerPart, AnswerReady, AnswerStatus
from core.units import Intent

_RANK = {"grounded": 2, "weak": 1, "no-context": 0}
NO_EVIDENCE = "I found no evidence in the knowledge base for this question."


@dataclass
class Part:
    """One sub-question in a revision: its intent, the evidence found, the answer and its verdict."""

    intent: Intent
    evidence_plugin: str | None = None
    evidence: KbResult | None = None
    answer: GsResult | None = None
    verdict: ValResult | None = None

    @property
    def status(self) -> AnswerStatus:
        if self.answer is None or self.answer.status is not Status.SUCCESS:
            return "no-context"
        rejected = self.verdict is not None and self.verdict.status is Status.REJECTED
        sufficient = self.evidence is not None and self.evidence.status is Status.SUCCESS
        return "grounded" if sufficient and not rejected and not self.answer.weak else "weak"


@dataclass
class Revision:
    """One plan revision's attempt at the whole input: its parts, and why it failed if it did."""

    revision: int
    parts: list[Part] = field(default_factory=list)
    failure: str = ""
    # Said with the answer: e.g. the questions dropped by budgets.maxSubQuestions.
    note: str = ""

    @property
    def score(self) -> tuple[int, ...]:
        return tuple(sorted((_RANK[p.status] for p in self.parts), reverse=True)) if self.parts else (-1,)

    @property
    def accepted(self) -> bool:
        return bool(self.parts) and all(p.status == "grounded" for p in self.parts)

    def rejected_evidence(self) -> list[str]:
        """The kb plugins whose evidence the validator rejected an answer on."""
        return [
            p.evidence_plugin
            for p in self.parts
            if p.evidence_plugin and p.verdict is not None and p.verdict.status is Status.REJECTED
        ]

    def why_not_accepted(self) -> str:
        if self.failure:
            return self.failure
        for part in self.parts:
            if part.verdict is not None and part.verdict.status is Status.REJECTED:
                return f"{part.verdict.reason or 'the validator rejected the answer'}"
            if part.status != "grounded":
                return f"the answer to {part.intent.target!r} is {part.status}"
        return "no answer"


def answer_event(revision: Revision) -> AnswerReady:
    parts = []
    for index, part in enumerate(revision.parts):
        text = (part.answer.answer if part.answer else "") or NO_EVIDENCE
        if part.status == "weak" and not text.startswith(INSUFFICIENT_PREFACE):
            # The words must match the status: a weak answer says so first, whoever wrote it.
            text = f"{INSUFFICIENT_PREFACE} to answer fully; the closest answer is: {text}"
        cited = part.answer.cited_ids if part.answer else ()
        parts.append(
            AnswerPart(
                intent_index=index,
                target=part.intent.target,
                answer=text,
                status=part.status,
                cited_ids=cited,
                evidence_plugin=part.evidence_plugin,
                detail=part.answer.detail if part.answer else None,
                lead=part.answer.lead if part.answer and part.status == "grounded" else "",
            )
        )
    if not parts:
        reason = revision.failure or "no answer"
        return AnswerReady(answer=f"No answer: {reason}.", status="no-context")
    statuses = {p.status for p in parts}
    status: AnswerStatus = (
        "grounded" if statuses == {"grounded"} else "no-context" if statuses == {"no-context"} else "weak"
    )
    if len(parts) == 1:
        text = parts[0].answer
    else:
        text = "\n".join(f"{i + 1}. {p.target}\n   {p.answer}" for i, p in enumerate(parts))
        if status == "weak":
            text = f"{INSUFFICIENT_PREFACE} to answer every part:\n{text}"
    if revision.note:
        text = f"{text}\n\n{revision.note}"
    evidence = tuple(dict.fromkeys(uid for p in parts for uid in p.cited_ids))
    return AnswerReady(answer=text, status=status, evidence_ids=evidence, parts=tuple(parts))
