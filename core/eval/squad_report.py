"""The SQuAD 2.0 report: official EM/F1, HasAns/NoAns, abstention, lead EM/F1 of answered
questions, the always-abstain baseline and a row per question type, as
`../shared/qa/squad2-dev/judge.py` defines each number (core/eval/squad.py reads and scores)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence

from pydantic import BaseModel, ConfigDict

from core.eval.answer_checks import strip_citations
from core.eval.squad import SquadRow, SquadSet


class TypeRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    type: str
    questions: int
    answerable: int
    abstained_answerable: float | None
    abstained_impossible: float | None
    em: float
    f1: float


class SquadReport(BaseModel):
    """Shares as fractions (0–1); EM/F1 as percentages, as the official evaluation prints them."""

    model_config = ConfigDict(frozen=True)

    name: str
    seed: int
    limit: int
    questions: int
    answerable: int
    impossible: int
    status_counts: dict[str, int]
    exact: float
    f1: float
    hasans_exact: float | None
    hasans_f1: float | None
    noans_exact: float | None
    abstain_on_impossible: float | None
    abstain_on_answerable: float | None
    answered_answerable: int
    contains_of_answered: float | None
    lead_em_of_answered: float | None
    lead_f1_of_answered: float | None
    always_abstain: float
    # The same figures re-weighted to the whole set's answerable/impossible mix.
    set_impossible_share: float
    exact_set_mix: float | None
    f1_set_mix: float | None
    always_abstain_set_mix: float
    median_answer_words: int
    median_lead_words: int
    median_gold_words: int
    types: tuple[TypeRow, ...]
    rows: tuple[SquadRow, ...]


def report(squad: SquadSet, rows: Sequence[SquadRow], seed: int, limit: int) -> SquadReport:
    answerable = [r for r in rows if not r.is_impossible]
    impossible = [r for r in rows if r.is_impossible]
    answered = [r for r in answerable if not r.abstained]
    share = sum(q.is_impossible for q in squad.questions) / len(squad.questions)
    has_em, has_f1 = _pct(r.em for r in answerable), _pct(r.f1 for r in answerable)
    no_em = _pct(r.em for r in impossible)
    return SquadReport(
        name=squad.name,
        seed=seed,
        limit=limit,
        questions=len(rows),
        answerable=len(answerable),
        impossible=len(impossible),
        status_counts=dict(Counter(r.status for r in rows)),
        exact=_pct(r.em for r in rows) or 0.0,
        f1=_pct(r.f1 for r in rows) or 0.0,
        hasans_exact=has_em,
        hasans_f1=has_f1,
        noans_exact=no_em,
        abstain_on_impossible=_share(r.abstained for r in impossible),
        abstain_on_answerable=_share(r.abstained for r in answerable),
        answered_answerable=len(answered),
        contains_of_answered=_share(bool(r.contains) for r in answered),
        lead_em_of_answered=_pct(r.em for r in answered),
        lead_f1_of_answered=_pct(r.f1 for r in answered),
        always_abstain=round(100 * len(impossible) / len(rows), 2) if rows else 0.0,
        set_impossible_share=round(share, 4),
        exact_set_mix=_mix(has_em, no_em, share),
        f1_set_mix=_mix(has_f1, no_em, share),
        always_abstain_set_mix=round(100 * share, 2),
        median_answer_words=_median(len(strip_citations(r.answer).split()) for r in answered),
        median_lead_words=_median(len(r.lead.split()) for r in answered),
        median_gold_words=_median(min(len(g.split()) for g in r.answers) for r in answerable if r.answers),
        types=tuple(_type_rows(rows)),
        rows=tuple(rows),
    )


def _type_rows(rows: Sequence[SquadRow]) -> Iterator[TypeRow]:
    counts = Counter(r.type for r in rows)
    for name, _ in counts.most_common():
        group = [r for r in rows if r.type == name]
        yield TypeRow(
            type=name,
            questions=len(group),
            answerable=sum(not r.is_impossible for r in group),
            abstained_answerable=_share(r.abstained for r in group if not r.is_impossible),
            abstained_impossible=_share(r.abstained for r in group if r.is_impossible),
            em=_pct(r.em for r in group) or 0.0,
            f1=_pct(r.f1 for r in group) or 0.0,
        )


def _pct(values: Iterable[float]) -> float | None:
    listed = list(values)
    return round(100 * sum(listed) / len(listed), 2) if listed else None


def _share(values: Iterable[bool]) -> float | None:
    listed = list(values)
    return round(sum(listed) / len(listed), 4) if listed else None


def _mix(answerable: float | None, impossible: float | None, share: float) -> float | None:
    if answerable is None or impossible is None:
        return None
    return round((1 - share) * answerable + share * impossible, 2)


def _median(values: Iterable[int]) -> int:
    listed = sorted(values)
    return listed[len(listed) // 2] if listed else 0


def markdown(result: SquadReport) -> str:
    """The figures beside the always-abstain baseline, then one row per question type."""

    def pct(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.2f}"

    def share(value: float | None) -> str:
        return "n/a" if value is None else f"{100 * value:.1f}%"

    lines = [
        f"## SQuAD 2.0: {result.name} ({result.questions} questions: {result.answerable} answerable, "
        f"{result.impossible} impossible; seed {result.seed}, limit {result.limit or 'all'})",
        "",
        "| measure | value |",
        "|---|---:|",
        f"| SQuAD 2.0 EM / F1 | {pct(result.exact)} / {pct(result.f1)} |",
        f"| HasAns EM / F1 | {pct(result.hasans_exact)} / {pct(result.hasans_f1)} |",
        f"| NoAns EM = F1 | {pct(result.noans_exact)} |",
        f"| always-abstain EM = F1 | {pct(result.always_abstain)} |",
        f"| abstained on impossible (higher is better) | {share(result.abstain_on_impossible)} |",
        f"| abstained on answerable (lower is better) | {share(result.abstain_on_answerable)} |",
        f"| answered answerable: gold in answer | {share(result.contains_of_answered)} ({result.answered_answerable}) |",
        f"| answered answerable: lead EM / F1 | {pct(result.lead_em_of_answered)} / {pct(result.lead_f1_of_answered)} |",
        f"| EM / F1 at the set's mix ({share(result.set_impossible_share)} impossible) | "
        f"{pct(result.exact_set_mix)} / {pct(result.f1_set_mix)} (always-abstain {pct(result.always_abstain_set_mix)}) |",
        f"| median words: answer / lead / shortest gold | {result.median_answer_words} / {result.median_lead_words} / "
        f"{result.median_gold_words} |",
        "",
        "status: " + ", ".join(f"{k} {v}" for k, v in sorted(result.status_counts.items())),
        "",
        "| type | questions | answerable | abstained (answerable) | abstained (impossible) | EM | F1 |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {t.type} | {t.questions} | {t.answerable} | {share(t.abstained_answerable)} | "
        f"{share(t.abstained_impossible)} | {pct(t.em)} | {pct(t.f1)} |"
        for t in result.types
    ]
    return "\n".join(lines)


def dumps(result: SquadReport) -> str:
    return json.dumps(result.model_dump(mode="json"), indent=2, ensure_ascii=False)
