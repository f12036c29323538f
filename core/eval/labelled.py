"""Labelled-query evaluation: recall@k and MRR per kb plugin, answer checks and safety gates (seed 002).

Recall is measured on each kb plugin run directly, so a plugin's score does not depend on which
plugin the planner would have picked. Answers and safety are measured on the whole engine run,
because a restricted id anywhere in the trace is a leak, whichever stage put it there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, cast

from pydantic import BaseModel, ConfigDict, computed_field

from core.eval.answer_checks import AnswerVerdict
from core.eval.queries import AnswerStatus, CallerSpec, QuerySpec, load_queries, stale_labels
from core.infra.config import FusionMethod, RetrievalConfig
from core.kb.knowledge_base import visible_to
from core.kernel.calls import retrieve_bounded
from core.kernel.contract import KbResult, KnowledgePlugin, PluginType, Request, RunContext, Status
from core.kernel.events import AnswerReady, Event, IntentDetected, ProofNode, ProofsFound, RetrievalScored
from core.memory.eval_conversations import Conversations
from core.question.intent_cues import question_cues
from core.units import Caller, Intent

if TYPE_CHECKING:
    from core.kb.knowledge_base import KBView
    from core.kernel.session import Session

# The queries file's names, for callers that import them from here.
__all__ = [
    "ALL_KINDS",
    "AnswerChecks",
    "CallerSpec",
    "EvalReport",
    "IdFinder",
    "QueryResult",
    "QuerySpec",
    "evaluate",
    "load_queries",
    "stale_labels",
    "with_fusion",
]

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


# --- running --------------------------------------------------------------------------------------


def evaluate(
    session: Session,
    queries: Sequence[QuerySpec],
    kb_plugins: Sequence[str],
    fusion_methods: Sequence[str] = (FusionMethod.WEIGHTED,),
    author_view: bool = False,
) -> EvalReport:
    """Score every query per fusion method. Raises RegistryError for an unknown kb plugin id.

    `author_view` adds `absent_ids`, which looks at the whole KB: for the KB's author only.
    """
    methods = [FusionMethod(m) for m in fusion_methods]
    results: list[QueryResult] = []
    for method in methods:
        runner = _Runner(_session_for(session, method), kb_plugins, method)
        results.extend(runner.run(query) for query in queries)
    return EvalReport(
        plugins=tuple(kb_plugins),
        fusion_methods=tuple(m.value for m in methods),
        queries=tuple(results),
        recall=tuple(_recall_rows(results, kb_plugins)),
        gates=tuple(_gates(results, methods)),
        answers=tuple(check for m in methods for check in _answer_checks(results, m.value)),
        unknown_ids=_unknown_ids(session, queries),
        absent_ids=_absent_ids(session, queries) if author_view else None,
    )


def with_fusion(config: RetrievalConfig, method: FusionMethod) -> RetrievalConfig:
    return config.model_copy(update={"fusion": config.fusion.model_copy(update={"method": method})})


def _session_for(session: Session, method: FusionMethod) -> Session:
    if session.retrieval.fusion.method is method:
        return session
    return session.with_retrieval(with_fusion(session.retrieval, method))


class _Runner:
    """Runs queries on one session (one fusion method)."""

    def __init__(self, session: Session, plugin_ids: Sequence[str], method: FusionMethod):
        self.session = session
        # get() checked each plugin's type is KB
        self.plugins = [cast(KnowledgePlugin, session.registry.get(pid, PluginType.KB)) for pid in plugin_ids]
        self.method = method
        self._hidden: dict[object, tuple[IdFinder, frozenset[str]]] = {}
        self.conversations = Conversations(session)

    def run(self, query: QuerySpec) -> QueryResult:
        caller = query.as_caller()
        request = Request(question=query.question, caller=caller)
        view = self.session.view(caller)
        results = self._retrieve(request, view)
        candidates = {pid: [c.id for c in r.outcome.candidates] if r.outcome else [] for pid, r in results.items()}
        events = self.conversations.run(query.conversation, request)
        intent = next((e for e in events if isinstance(e, IntentDetected)), None)
        answer = next((e for e in reversed(events) if isinstance(e, AnswerReady)), None)
        seen = _Seen(query.question, cast("list[Event]", events), candidates)  # all Session.run yields
        verdict = AnswerVerdict(query, answer)
        return QueryResult(
            id=query.id,
            kind=query.kind_name,
            type=query.type_name,
            fusion=self.method.value,
            expect_evidence=query.expect_evidence,
            expect_status=query.expect_status,
            expect_abstain=query.expect_abstain,
            status=verdict.status,
            answer=verdict.text,
            lead=verdict.lead,
            answer_em=verdict.em,
            answer_f1=verdict.f1,
            retrieval=tuple(_plugin_run(pid, result, query.expect_evidence) for pid, result in results.items()),
            forbidden_seen=seen.sightings(IdFinder(query.must_not_appear)),
            hidden_seen=seen.sightings(*self._hidden_finder(caller)),
            answer_checked=query.checks_answer,
            answer_problems=verdict.problems,
            conversation=query.conversation,
            resolved=intent.resolved if intent is not None else (),
            unresolved=intent.unresolved if intent is not None else (),
        )

    def _retrieve(self, request: Request, view: KBView) -> dict[str, KbResult]:
        """Each plugin on its own, with the act the planner would detect, as `mrptui retrieve` runs it."""
        intent = Intent(act=question_cues(request.question).act, target=request.question, output="text")
        context = RunContext(request=request, view=view, services=None)
        timeout = self.session.engine_config.budgets.plugin_timeout_ms
        return {p.id: retrieve_bounded(p, context, intent, timeout) for p in self.plugins}

    def _hidden_finder(self, caller: Caller) -> tuple[IdFinder, frozenset[str]]:
        """Every stored unit the caller may not see: the label-free leak check, as (a finder for
        free text, the exact ids for the fields that name units).

        Recomputed from the raw units and the permission rule, never taken from a view or a
        cache, so a cache that served the wrong view cannot also hide the leak. But the verdict
        is the caller's: an id that reads like one in the caller's view (another case) or that
        the view's own text quotes is the caller's to read, so in free text it never fails the
        gate (that would tell the caller the restricted id exists). A unit-id field holding a
        hidden id exactly is a leak whatever the spelling around it.
        """
        if caller.key not in self._hidden:
            units = self.session.kb.units
            visible = [u for u in units if visible_to(u, caller)]
            # An id one of whose units the caller may see (a clash) is theirs to read.
            shown = {u.id for u in visible}
            hidden = frozenset(u.id for u in units if u.id not in shown)
            readable = {u.id.casefold() for u in visible}
            in_text = IdFinder(uid for uid in hidden if uid.casefold() not in readable)
            quoted = in_text.find("\n".join(u.model_dump_json() for u in visible)) if in_text.ids else set()
            self._hidden[caller.key] = (IdFinder(in_text.ids - quoted), hidden)
        return self._hidden[caller.key]


class IdFinder:
    """Finds whole unit ids in text, in any case, so "a::unit-1" is not reported inside
    "a::unit-10" and "A::UNIT-1" echoed in lower case is still "a::unit-1"."""

    def __init__(self, ids: Iterable[str]):
        self.ids = frozenset(ids)
        self._by_folded: dict[str, set[str]] = {}
        for uid in self.ids:
            self._by_folded.setdefault(uid.casefold(), set()).add(uid)
        # Longest first, so an id that is a prefix of another never shadows it.
        alternatives = "|".join(re.escape(i) for i in sorted(self.ids, key=len, reverse=True))
        self._pattern = re.compile(rf"(?<![\w:-])(?:{alternatives})(?![\w-])", re.IGNORECASE) if self.ids else None

    def find(self, text: str) -> set[str]:
        if not self._pattern:
            return set()
        return {uid for match in self._pattern.findall(text) for uid in self._by_folded.get(match.casefold(), ())}

    def among(self, ids: Iterable[str]) -> set[str]:
        """The sought ids that name one of `ids`, compared in any case."""
        return {uid for other in ids for uid in self._by_folded.get(other.casefold(), ())}


class _Seen:
    """What one query's run showed: every event's JSON, the unit ids events rank, prove or cite,
    and each directly run plugin's candidate list."""

    def __init__(self, question: str, events: Sequence[Event], candidates: dict[str, list[str]]):
        self.question = question
        self.texts = [(f"event {e.seq} {e.kind}", e.model_dump_json()) for e in events]
        self.unit_ids = [(f"event {e.seq} {e.kind}", _unit_ids(e)) for e in events]
        self.candidates = candidates

    def sightings(self, finder: IdFinder, exact: frozenset[str] | None = None) -> tuple[str, ...]:
        """Each forbidden id the run showed, as "<id> in <where>".

        An id the question itself contains, in any case, is echoed in query terms and reasons
        without being shown to anyone, so for those ids only the unit-id fields count, not free
        text. Ids compare in any case everywhere: a gate that failed only for an id typed in
        another case than the KB's would tell the caller that the restricted id exists. `exact`:
        ids that count in unit-id fields and candidate lists only as written (the hidden units').
        """
        typed = finder.find(self.question)
        in_text = IdFinder(finder.ids - typed) if typed else finder
        seen = [f"{uid} in {where}" for where, text in self.texts for uid in sorted(in_text.find(text))]
        if exact is None:
            seen += [f"{uid} in {where}" for where, ids in self.unit_ids for uid in sorted(typed & finder.among(ids))]
            seen += [
                f"{uid} in {pid} candidates"
                for pid, ids in self.candidates.items()
                for uid in sorted(finder.among(ids))
            ]
        else:
            seen += [f"{uid} in {where}" for where, ids in self.unit_ids for uid in sorted(exact & ids)]
            seen += [
                f"{uid} in {pid} candidates"
                for pid, ids in self.candidates.items()
                for uid in sorted(exact.intersection(ids))
            ]
        return tuple(dict.fromkeys(seen))


def _unit_ids(event: object) -> set[str]:
    """The ids an event ranks, proves, cites or adds as context."""
    if isinstance(event, RetrievalScored):
        return {c.id for c in event.candidates} | set(event.evidence_ids)
    if isinstance(event, ProofsFound):
        return {uid for proof in event.proofs for uid in _proof_units(proof)}
    if isinstance(event, AnswerReady):
        return set(event.evidence_ids) | {uid for part in event.parts for uid in part.cited_ids}
    if isinstance(event, IntentDetected):
        return set(event.context_unit_ids)
    return set()


def _proof_units(node: ProofNode) -> Iterator[str]:
    yield from node.units
    for premise in node.premises:
        yield from _proof_units(premise)


def _plugin_run(plugin_id: str, result: KbResult, expected: Sequence[str]) -> PluginRun:
    outcome = result.outcome
    # Labels compare in any case, as the gates do.
    ranked = {c.id.casefold(): c.rank for c in outcome.candidates} if outcome else {}
    kept = {uid.casefold() for uid in outcome.evidence_ids} if outcome else set()
    ranks = {uid: ranked.get(uid.casefold()) for uid in expected}
    found = [rank for rank in ranks.values() if rank is not None]
    total = len(expected) or 1
    return PluginRun(
        plugin=plugin_id,
        ranks=ranks,
        kept=tuple(uid for uid in expected if uid.casefold() in kept),
        recall_at_1=sum(rank <= 1 for rank in found) / total,
        recall_at_3=sum(rank <= 3 for rank in found) / total,
        recall_at_k=sum(uid.casefold() in kept for uid in expected) / total,
        reciprocal_rank=1 / min(found) if found else 0.0,
        error=result.reason if result.status is Status.ERROR else "",
    )


# --- aggregation ----------------------------------------------------------------------------------


def _recall_rows(results: Sequence[QueryResult], plugins: Sequence[str]) -> list[RecallRow]:
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


def _gates(results: Sequence[QueryResult], methods: Sequence[FusionMethod]) -> list[GateResult]:
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


def _answer_checks(results: Sequence[QueryResult], fusion: str) -> list[AnswerChecks]:
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


def _unknown_ids(session: Session, queries: Sequence[QuerySpec]) -> dict[str, tuple[str, ...]]:
    """Expected evidence the query's caller cannot see: a typo here makes recall meaningless.

    Judged per caller from the raw units, and an id that is restricted reads exactly like one
    that does not exist, so the report confirms nothing outside the caller's view.
    """
    unknown = {}
    for query in queries:
        caller = query.as_caller()
        visible = {unit.id.casefold() for unit in session.kb.units if visible_to(unit, caller)}
        unknown[query.id] = tuple(uid for uid in query.expect_evidence if uid.casefold() not in visible)
    return {qid: ids for qid, ids in unknown.items() if ids}


def _absent_ids(session: Session, queries: Sequence[QuerySpec]) -> dict[str, tuple[str, ...]]:
    """Author view: labelled ids no file holds (a must_not_appear typo makes its gate pass vacuously)."""
    known = {unit.id.casefold() for unit in session.kb.units}
    labelled = {q.id: (*q.expect_evidence, *q.must_not_appear) for q in queries}
    absent = {qid: tuple(uid for uid in ids if uid.casefold() not in known) for qid, ids in labelled.items()}
    return {qid: ids for qid, ids in absent.items() if ids}
