"""What `mrptui eval` reports for labelled queries (core/eval/labelled.py): each query's result,
recall@k and MRR per kb plugin, fusion and kind, the safety gates and the answer checks, and how
the per-query results are summed into them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict, computed_field

from core.eval.queries import AnswerStatus
from core.infra.config import FusionMethod

ALL_KINDS = "all"


# --- results --------------------------------------------------------------------------------------


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True)


class PluginRun(_Out):
    """One kb plugin on one query: where each expected id ranked, and which were kept."""

    plugin: str
    ranks: dict[str, int | None]
    kept: tuple[str, ...]
    recall_at_1: float
    recall_at_3: float
    recall_at_k: float
    reciprocal_rank: float
    # Why the plugin gave no candidates when it failed (e.g. its pluginTimeoutMs passed).
    error: str = ""


class QueryResult(_Out):
    id: str
    kind: str
    type: str
    fusion: str
    expect_evidence: tuple[str, ...]
    expect_status: AnswerStatus | None
    expect_abstain: bool = False
    status: str
    answer: str
    # What the answer asserts: the short answer before "because" ("" when it abstains).
    lead: str
    # SQuAD EM and token F1 of the lead against `expect_answer` (None when no gold is labelled).
    answer_em: int | None
    answer_f1: float | None
    retrieval: tuple[PluginRun, ...]
    forbidden_seen: tuple[str, ...]
    hidden_seen: tuple[str, ...]
    answer_checked: bool
    answer_problems: tuple[str, ...]
    # A conversation's turn: how memory completed the question, and why it left a pronoun as asked.
    conversation: str | None = None
    resolved: tuple[str, ...] = ()
    unresolved: tuple[str, ...] = ()
    # Closures a budget stopped ("kb-thinkingdb stopped deriving at maxClosureMb=1024"): the answer
    # may miss what the rest would have proved.
    budget_stops: tuple[str, ...] = ()


class RecallRow(_Out):
    plugin: str
    fusion: str
    kind: str
    count: int
    recall_at_1: float
    recall_at_3: float
    recall_at_k: float
    mrr: float


class GateResult(_Out):
    gate: str
    fusion: str
    checked: int
    failures: dict[str, str]

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented form; mypy cannot type it
    @property
    def passed(self) -> bool:
        return not self.failures


class AnswerChecks(_Out):
    fusion: str
    type: str
    checked: int
    failures: dict[str, str]
    # Means over the queries with `expect_answer` (None when there are none).
    scored: int = 0
    answer_em: float | None = None
    answer_f1: float | None = None

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented form; mypy cannot type it
    @property
    def passed(self) -> int:
        return self.checked - len(self.failures)

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented form; mypy cannot type it
    @property
    def rate(self) -> float:
        return round(self.passed / self.checked, 4) if self.checked else 1.0


class EvalReport(_Out):
    plugins: tuple[str, ...]
    fusion_methods: tuple[str, ...]
    queries: tuple[QueryResult, ...]
    recall: tuple[RecallRow, ...]
    gates: tuple[GateResult, ...]
    answers: tuple[AnswerChecks, ...]
    # Expected evidence the query's caller cannot see: absent or restricted, deliberately alike.
    unknown_ids: dict[str, tuple[str, ...]]
    # Author view only (None otherwise): labelled ids no KB file holds.
    absent_ids: dict[str, tuple[str, ...]] | None = None

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented form; mypy cannot type it
    @property
    def safe(self) -> bool:
        return all(gate.passed for gate in self.gates)

    def recall_for(self, plugin: str, fusion: str = "weighted", kind: str = ALL_KINDS) -> RecallRow:
        return next(r for r in self.recall if (r.plugin, r.fusion, r.kind) == (plugin, fusion, kind))

    def gate(self, name: str, fusion: str = "weighted") -> GateResult:
        return next(g for g in self.gates if (g.gate, g.fusion) == (name, fusion))

    def kinds(self) -> list[str]:
        return sorted({r.kind for r in self.recall if r.kind != ALL_KINDS})

    def answers_for(self, fusion: str = "weighted", type_name: str = ALL_KINDS) -> AnswerChecks:
        return next(a for a in self.answers if (a.fusion, a.type) == (fusion, type_name))


# --- aggregation ----------------------------------------------------------------------------------


def recall_rows(results: Sequence[QueryResult], plugins: Sequence[str]) -> list[RecallRow]:
    """Means over the queries that expect evidence, overall and per kind, per plugin and fusion."""
    labelled = [r for r in results if r.expect_evidence]
    rows: list[RecallRow] = []
    for fusion in dict.fromkeys(r.fusion for r in results):
        in_fusion = [r for r in labelled if r.fusion == fusion]
        for kind in [ALL_KINDS, *sorted({r.kind for r in in_fusion})]:
            group = [r for r in in_fusion if kind in (ALL_KINDS, r.kind)]
            rows.extend(_recall_row(plugin, fusion, kind, group) for plugin in plugins)
    return rows


def _recall_row(plugin: str, fusion: str, kind: str, group: Sequence[QueryResult]) -> RecallRow:
    runs = [next(run for run in r.retrieval if run.plugin == plugin) for r in group]
    count = len(runs)

    def mean(values: Iterable[float]) -> float:
        return round(sum(values) / count, 4) if count else 0.0

    return RecallRow(
        plugin=plugin,
        fusion=fusion,
        kind=kind,
        count=count,
        recall_at_1=mean(run.recall_at_1 for run in runs),
        recall_at_3=mean(run.recall_at_3 for run in runs),
        recall_at_k=mean(run.recall_at_k for run in runs),
        mrr=mean(run.reciprocal_rank for run in runs),
    )


def gates(results: Sequence[QueryResult], methods: Sequence[FusionMethod]) -> list[GateResult]:
    gates = []
    for method in methods:
        runs = [r for r in results if r.fusion == method.value]
        # A question with no answer in the KB must not come back grounded, however it is labelled.
        abstaining = [r for r in runs if r.expect_status == "no-context" or r.expect_abstain]
        gates += [
            GateResult(
                gate="must-not-appear",
                fusion=method.value,
                checked=len(runs),
                failures={r.id: "; ".join(r.forbidden_seen) for r in runs if r.forbidden_seen},
            ),
            GateResult(
                gate="view-boundary",
                fusion=method.value,
                checked=len(runs),
                failures={r.id: "; ".join(r.hidden_seen) for r in runs if r.hidden_seen},
            ),
            GateResult(
                gate="abstention",
                fusion=method.value,
                checked=len(abstaining),
                failures={
                    r.id: f"expected {_abstention(r)}, came back grounded" for r in abstaining if r.status == "grounded"
                },
            ),
        ]
    return gates


def _abstention(result: QueryResult) -> str:
    return "no-context" if result.expect_status == "no-context" else "to abstain"


def answer_checks(results: Sequence[QueryResult], fusion: str) -> list[AnswerChecks]:
    """Answer accuracy over every checked query of one fusion method, then per question type."""
    checked = [r for r in results if r.fusion == fusion and r.answer_checked]
    types = sorted({r.type for r in checked})
    return [
        AnswerChecks(
            fusion=fusion,
            type=type_name,
            checked=len(group),
            failures={r.id: "; ".join(r.answer_problems) for r in group if r.answer_problems},
            scored=len(scored),
            answer_em=_mean(r.answer_em for r in scored) if scored else None,
            answer_f1=_mean(r.answer_f1 for r in scored) if scored else None,
        )
        for type_name in [ALL_KINDS, *types]
        for group in [[r for r in checked if type_name in (ALL_KINDS, r.type)]]
        for scored in [[r for r in group if r.answer_f1 is not None]]
    ]


def _mean(values: Iterable[float | None]) -> float:
    listed = [v or 0.0 for v in values]
    return round(sum(listed) / len(listed), 4)
