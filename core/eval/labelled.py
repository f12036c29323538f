"""Labelled-query evaluation: recall@k and MRR per kb plugin, answer checks and safety gates (seed 002).

Recall is measured on each kb plugin run directly, so a plugin's score does not depend on which
plugin the planner would have picked. Answers and safety are measured on the whole engine run,
because a restricted id anywhere in the trace is a leak, whichever stage put it there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from core.eval.answer_checks import AnswerVerdict
from core.eval.labelled_report import EvalReport, PluginRun, QueryResult, answer_checks, gates, recall_rows
from core.eval.queries import CallerSpec, QuerySpec, load_queries, stale_labels
from core.eval.sightings import IdFinder, Seen
from core.infra.config import FusionMethod, RetrievalConfig
from core.kb.knowledge_base import visible_to
from core.kernel.calls import retrieve_bounded
from core.kernel.contract import KbResult, KnowledgePlugin, PluginType, Request, RunContext, Status
from core.kernel.events import AnswerReady, Event, IntentDetected, ProofsFound
from core.kernel.summary import budget_stops
from core.memory.eval_conversations import Conversations
from core.question.intent_cues import question_cues
from core.units import Caller, Intent

if TYPE_CHECKING:
    from core.kb.knowledge_base import KBView
    from core.kernel.session import Session

# The queries file's names, for callers that import them from here.
__all__ = [
    "CallerSpec",
    "QuerySpec",
    "evaluate",
    "load_queries",
    "stale_labels",
    "with_fusion",
]


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
        recall=tuple(recall_rows(results, kb_plugins)),
        gates=tuple(gates(results, methods)),
        answers=tuple(check for m in methods for check in answer_checks(results, m.value)),
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
        seen = Seen(query.question, cast("list[Event]", events), candidates)  # all Session.run yields
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
            budget_stops=tuple(budget_stops(e for e in events if isinstance(e, ProofsFound))),
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
