""" "Why was this unit not returned?" — every lane's reason, for one unit and one question.

Ids outside the caller's view get one answer whatever the reason (unknown, restricted or out of
date), so the question cannot be used to probe for restricted units.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from core.answer.whynot_support import support_reason
from core.infra import leases
from core.infra.config import Lane
from core.infra.diagnostics import did_you_mean_id
from core.kernel.calls import retrieve_bounded
from core.kernel.contract import KbResult, KnowledgePlugin, PluginType, Request, RunContext, Status
from core.question.intent_cues import question_cues
from core.retrieval.fusion import cut_explanation
from core.retrieval.lanes import hdc_question
from core.text.synonyms import Expansion
from core.text.tokenizer import tokenize
from core.units import ACT_PREFERRED_ROLES, Caller, Intent

if TYPE_CHECKING:
    from core.kb.indexes import ViewIndexes
    from core.kernel.session import Session

NOT_VISIBLE = "not in this caller's view: no such unit, or it is restricted or not in effect on this date"


def why_not_asked(session: Session, unit_id: str, question: str, caller: Caller) -> dict[str, str]:
    """`why_not` for a question as `caller` asks it, inside a question lease (core/infra/leases.py), as the
    explorer asks while reloads and cache truncations may run beside it."""
    with leases.question():
        return why_not(session, unit_id, question, Request(question=question, caller=caller))


def why_not(session: Session, unit_id: str, question: str, request: Request) -> dict[str, str]:
    view = session.view(request.caller)
    unit = view.get(unit_id)
    if unit is None:
        clashing = view.clashing(unit_id)
        if clashing:  # every unit of it that counts is one this caller may see: nothing else shows
            return {
                "visibility": f"withheld: {clashing} units this caller may see share this id (DUPLICATE_UNIT_ID); "
                "none is served until the author renames or removes all but one"
            }
        return {"visibility": NOT_VISIBLE + did_you_mean_id(unit_id, view.ids())}
    cues = question_cues(question)
    intent = Intent(act=cues.act, target=question, output="text")
    indexes = session.indexes.for_view(view)
    reasons = {"visibility": "visible to this caller"}
    expansion = session.synonyms.expand(tokenize(question))
    if expansion.matches:
        reasons["synonyms"] = "; ".join(f"{m.label()} ({m.file}:{m.line})" for m in expansion.matches)
    reasons["bm25"] = _bm25_reason(indexes, unit_id, expansion, intent)
    reasons["hdc"] = _hdc_reason(session, indexes, unit_id, expansion.terms, intent)
    reasons["thinkingdb"] = _tdb_reason(indexes, unit_id, question)
    reasons["support"] = support_reason(unit, question)
    ctx = RunContext(request=request, view=view, services=None)
    timeout = session.engine_config.budgets.plugin_timeout_ms
    for plugin in session.registry.of_type(PluginType.KB):
        # The registry files every kb plugin under PluginType.KB.
        reasons[plugin.id] = _plugin_reason(
            retrieve_bounded(cast(KnowledgePlugin, plugin), ctx, intent, timeout), unit_id
        )
    return reasons


def _bm25_reason(indexes: ViewIndexes, unit_id: str, expansion: Expansion, intent: Intent) -> str:
    terms = expansion.terms
    matched = indexes.bm25.matched_terms(terms, unit_id)
    if not matched:
        return f"no shared terms with the query ({', '.join(dict.fromkeys(terms)) or 'no query terms'})"
    explanation = indexes.bm25.explain(terms, unit_id, ACT_PREFERRED_ROLES[intent.act])
    shared = ", ".join(f"{t} (synonym {expansion.via(t)})" if expansion.via(t) else t for t in matched)
    return f"shares {shared}; raw score {explanation.raw:.3f}"


def _hdc_reason(session: Session, indexes: ViewIndexes, unit_id: str, terms: list[str], intent: Intent) -> str:
    config = session.retrieval.hdc
    ranked = [uid for uid, _ in indexes.bm25.top_k(terms, ACT_PREFERRED_ROLES[intent.act], config.feedback_units)]
    query = hdc_question(indexes.hdc, terms, intent.act, config, ranked)
    scores = indexes.hdc.scores(query)
    row = indexes.hdc.unit_ids.index(unit_id)
    score = float(scores[row])
    rank = int((scores > score).sum()) + 1
    if score < config.lane_min_score:
        return f"score {score:.3f} is below the lane floor {config.lane_min_score:.2f}"
    if rank > config.lane_pool:
        return f"score {score:.3f} ranks {rank}, outside the lane's best {config.lane_pool}"
    # The lane's defaults; a profile with its own feedbackUnits gives its reason in its own row.
    return f"score {score:.3f}, rank {rank} (lane defaults; used only when a plugin runs the HDC lane)"


def _tdb_reason(indexes: ViewIndexes, unit_id: str, question: str) -> str:
    result = indexes.tdb.query(question)
    if unit_id in result.unit_scores:
        return f"path score {result.unit_scores[unit_id]:.3f}"
    return indexes.tdb.explain_absence(unit_id, question)


def _plugin_reason(result: KbResult, unit_id: str) -> str:
    if result.status is Status.ERROR:
        return f"error: {result.reason}"
    outcome = result.outcome
    candidate = outcome.candidate(unit_id) if outcome else None
    if candidate is None:
        lanes = ", ".join(lane.value for lane in (outcome.lanes if outcome else ()))
        return f"not a candidate: none of its lanes ({lanes}) put it among their best units"
    verdict = cut_explanation(candidate, outcome.cutoffs)
    if candidate.kept and Lane.TDB in candidate.lanes:
        verdict += " (found by ThinkingDB)"
    return verdict
