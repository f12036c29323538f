"""`mrptui retrieve QUESTION`: run one kb plugin directly and show every scored candidate."""

from __future__ import annotations

import argparse
import json
import sys

from core.answer.whynot import why_not
from core.infra.config import Lane
from core.kernel.calls import retrieve_bounded
from core.kernel.contract import KbResult, PluginType, RegistryError, Request, RunContext
from core.kernel.events import ProofsFound, RetrievalScored
from core.kernel.summary import budget_stops
from core.question.intent_cues import question_cues
from core.retrieval.fusion import cut_explanation
from core.units import Act, Intent
from mrptui.commands import (
    UsageError,
    add_caller_options,
    add_cluster_options,
    add_session_options,
    caller_from_args,
    exit_code,
    question_from,
    warn_health,
)
from mrptui.commands.cluster import cluster_config, session_on_cluster


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("question")
    add_session_options(parser)
    parser.add_argument(
        "--kb-plugin", default="kb-balanced", metavar="ID", help="kb plugin to run (default kb-balanced)"
    )
    parser.add_argument(
        "--act", choices=[a.value for a in Act], help="intent act (default: detected from the question)"
    )
    add_caller_options(parser, keep_top_level=True)
    parser.add_argument("--why-not", metavar="UNIT_ID", help="explain, lane by lane, why this unit was not returned")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_cluster_options(parser)


def run(args: argparse.Namespace) -> int:
    question = question_from(args.question)
    caller = caller_from_args(args)
    # A bad --cluster or --shards costs nothing: checked before the KB opens.
    if cluster_config(args) is not None and args.why_not:
        raise UsageError("--why-not scores every unit in one process: leave out --cluster (and cluster.json's address)")
    with session_on_cluster(args) as (session, cluster):
        return _retrieve(args, question, caller, session, cluster)


def _retrieve(args: argparse.Namespace, question: str, caller, session, cluster) -> int:
    limit = session.engine_config.budgets.max_question_chars
    if len(question) > limit:
        # The kernel refuses such a question in `ask`; run directly, the plugin would rank it anyway.
        raise UsageError(
            f"the question is {len(question):,} characters long, over the {limit:,} allowed (budgets.maxQuestionChars)"
        )
    health = warn_health(session, caller)
    try:
        plugin = session.registry.get(args.kb_plugin, PluginType.KB)
    except RegistryError as exc:
        raise UsageError(str(exc)) from None
    request = Request(question=question, caller=caller)
    if args.why_not:
        reasons = why_not(session, args.why_not, question, request)
        data = {"unit": args.why_not, "reasons": reasons, "diagnostics": health.model_dump()}
        print(json.dumps(data, indent=2) if args.json else _why_not_text(args.why_not, reasons))
        return exit_code(0, health, args)
    act = Act(args.act) if args.act else question_cues(question).act
    intent = Intent(act=act, target=question, output="text")
    timeout = session.engine_config.budgets.plugin_timeout_ms
    result = retrieve_bounded(
        plugin, RunContext(request=request, view=session.view(caller), services=None), intent, timeout
    )
    if result.outcome is None:
        # A timeout, an exception or a plugin with nothing to rank: said in one line, exit 1.
        print(f"mrptui: {plugin.id} {result.status.value}: {result.reason or 'no candidates'}", file=sys.stderr)
        return exit_code(1, health, args)
    shards = {"cluster": cluster()} if cluster is not None else {}  # as `ask --json` shows it
    data = {**result_json(result), "diagnostics": health.model_dump(), **shards}
    print(json.dumps(data, indent=2) if args.json else _table(result))
    return exit_code(0, health, args)


def result_json(result: KbResult) -> dict:
    outcome = result.outcome
    tdb = outcome.lane_details.get("tdb")
    best = tdb.best_proof_by_unit if tdb else {}
    candidates = []
    for c in outcome.candidates:
        row = {
            "id": c.id,
            "bm25": c.lane(Lane.BM25),
            "hdc": c.lane(Lane.HDC),
            "tdb": c.lane(Lane.TDB),
            "dense": c.lane(Lane.DENSE),
            "fused": round(c.fused, 6),
            "score": round(c.score, 6),
            "kept": c.kept,
            "kept_with": c.kept_with,
            "cut_reason": c.cut_reason.value if c.cut_reason else None,
        }
        if c.id in best:
            row["proof"] = best[c.id].to_dict()
        candidates.append(row)
    data = {
        "plugin": outcome.plugin,
        "status": result.status.value,
        "reason": result.reason,
        "act": outcome.act.value,
        "sufficient": outcome.sufficient,
        "escalated": outcome.escalated,
        "lanes": [lane.value for lane in outcome.lanes],
        "candidates": candidates,
        "evidence": list(outcome.evidence_ids),
        "synonyms": list(_synonyms(result)),
    }
    if tdb is not None:
        data["proofs"] = [p.to_dict() for p in tdb.proofs]
        data["stop_reason"] = tdb.stop_reason
    return data


def _synonyms(result: KbResult) -> tuple[str, ...]:
    """The synonyms applied to the question, from the plugin's scored event."""
    return next((e.synonyms for e in result.trace if isinstance(e, RetrievalScored)), ())


def _budget_stops(result: KbResult) -> list[str]:
    """The closure a budget cut short, from the plugin's proofs event (`--json`: `stop_reason`)."""
    return budget_stops(e for e in result.trace if isinstance(e, ProofsFound))


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _table(result: KbResult) -> str:
    outcome = result.outcome
    lanes = "+".join(lane.value for lane in outcome.lanes) + (" (escalated)" if outcome.escalated else "")
    lines = [
        f"{outcome.plugin}: {result.status.value} — {result.reason}",
        f"act {outcome.act.value}; lanes {lanes}; query terms: {' '.join(outcome.query_terms) or '(none)'}",
        *(f"synonym: {label}" for label in _synonyms(result)),
        *(f"budget: {note}; the candidates may be incomplete" for note in _budget_stops(result)),
        "",
        f"{'#':>3}  {'unit':<40} {'role':<12} {'bm25':>6} {'hdc':>6} {'tdb':>6} {'fused':>6} {'score':>6}  fate",
    ]
    for c in outcome.candidates:
        fate = "kept: proof" if c.kept_with else "kept" if c.kept else cut_explanation(c, outcome.cutoffs)
        lines.append(
            f"{c.rank:>3}  {c.id:<40} {c.role.value:<12} {_fmt(c.lane(Lane.BM25)):>6} {_fmt(c.lane(Lane.HDC)):>6}"
            f" {_fmt(c.lane(Lane.TDB)):>6} {c.fused:>6.3f} {c.score:>6.3f}  {fate}"
        )
    if not outcome.candidates:
        lines.append("     (no unit shares a term with the question)")
    lines.append("")
    lines.append(f"evidence: {', '.join(outcome.evidence_ids) or '(none)'}")
    return "\n".join(lines)


def _why_not_text(unit_id: str, reasons: dict[str, str]) -> str:
    width = max(len(k) for k in reasons)
    return "\n".join([f"why not {unit_id}?"] + [f"  {k:<{width}}  {v}" for k, v in reasons.items()])
