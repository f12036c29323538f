"""The fake session's scripted runs: canned, deterministic event lists built from core.kernel.events.

Scripts, chosen by the question:
- default: a ThinkingDB-style run (sd-llm-fast unsupported → L1 → sd-symbolic; kb-fast insufficient
  → L1 → kb-thinkingdb with proofs → gs-symbolic → val-grounded accepted → grounded answer).
  Pins and exclusions on the kb stage change the run, so re-runs and diffs differ.
- "compare ...": a replan run (val rejects → L2 replan by planner-depth → L1 → weak answer via L3).
- "everything ...": one kb-balanced retrieval with 700 candidates (for the evidence row cap).
- "boom ...": raises after a few events (the worker error path).
"""

from __future__ import annotations

from fake_kb import KB_ORDER, U_AIRFLOW, U_DAG, U_LUIGI, U_RETRY
from fake_scores import balanced_candidates, fast_candidates, recorded, retrieved, tdb_candidates

from core.kernel.candidates import CandidateScore
from core.kernel.contract import Request
from core.kernel.events import (
    AnswerDetail,
    AnswerPart,
    AnswerReady,
    AttemptFinished,
    AttemptStarted,
    Backtracked,
    IntentDetected,
    PlanBuilt,
    PlanStage,
    ProofNode,
    ProofsFound,
    RetrievalScored,
    RuleStat,
    RunFinished,
    RunStarted,
    StageStarted,
    Validated,
)
from core.units import Intent


def _answered(answer: str, status: str, cited: tuple[str, ...], target: str, **part) -> AnswerReady:
    """The answer of a one-intent question, its one part the whole answer."""
    return AnswerReady(
        answer=answer,
        status=status,
        evidence_ids=cited,
        parts=(AnswerPart(intent_index=0, target=target, answer=answer, status=status, cited_ids=cited, **part),),
    )


def _proofs() -> ProofsFound:
    base_uses = ProofNode(fact="airflow uses dag scheduling", confidence=1.0, units=(U_AIRFLOW,))
    base_provides = ProofNode(fact="dag scheduling provides retry handling", confidence=1.0, units=(U_DAG,))
    base_relevant = ProofNode(fact="retry handling relevant_for data pipelines", confidence=1.0, units=(U_RETRY,))
    capability = ProofNode(
        fact="airflow has_capability retry handling",
        confidence=0.95,
        steps=1,
        rule="tool_to_capability",
        weight=0.95,
        units=(U_AIRFLOW, U_DAG),
        premises=(base_uses, base_provides),
    )
    relevance = ProofNode(
        fact="airflow relevant_for data pipelines",
        confidence=0.855,
        steps=2,
        score=0.7,
        rule="capability_to_relevance",
        weight=0.9,
        units=(U_AIRFLOW, U_DAG, U_RETRY),
        premises=(capability, base_relevant),
    )
    return ProofsFound(
        plugin="kb-thinkingdb",
        stop_reason="fixpoint",
        seeds=("retry handling relevant_for data pipelines",),
        rounds=2,
        derived=2,
        proofs=(relevance,),
        rule_stats=(
            RuleStat(
                rule="tool_to_capability",
                fired=1,
                derived=("airflow has_capability retry handling",),
                bindings=({"?x": "airflow", "?y": "dag scheduling", "?z": "retry handling"},),
            ),
            RuleStat(
                rule="capability_to_relevance",
                fired=1,
                derived=("airflow relevant_for data pipelines",),
                bindings=({"?x": "airflow", "?c": "retry handling", "?g": "data pipelines"},),
            ),
            RuleStat(rule="dependency_transitive", fired=0, first_unmatched_premise=1),
            RuleStat(rule="causal_chain", fired=0, first_unmatched_premise=0),
        ),
    )


class _Script:
    def __init__(self) -> None:
        self.events: list = []

    def add(self, event) -> None:
        self.events.append(event.model_copy(update={"seq": len(self.events)}))


def _start(script: _Script, request: Request) -> None:
    caller = request.caller
    script.add(
        RunStarted(
            question=request.question,
            caller_tags=tuple(sorted(caller.tags)),
            caller_region=caller.region,
            as_of=caller.as_of.isoformat(),
            kb_version="kb-7f3a",
            pins=dict(request.pins),
            excluded=tuple(sorted(request.excluded)),
        )
    )


def _intent(script: _Script, act: str, target: str) -> Intent:
    intent = Intent(act=act, target=target, output="list")
    script.add(StageStarted(stage="sd", revision=1))
    script.add(AttemptStarted(stage="sd", plugin="sd-llm-fast", revision=1))
    script.add(
        AttemptFinished(
            stage="sd", plugin="sd-llm-fast", status="unsupported", reason="no LLM endpoint configured", ms=0.1
        )
    )
    script.add(
        Backtracked(level=1, stage="sd", plugin="sd-llm-fast", reason="sd-llm-fast unsupported, trying sd-symbolic")
    )
    script.add(AttemptStarted(stage="sd", plugin="sd-symbolic", revision=1))
    script.add(
        IntentDetected(
            plugin="sd-symbolic", cnl=f'@i1 intent {act} "{target}"\n@i2 set $i1 output list', intents=(intent,)
        )
    )
    script.add(AttemptFinished(stage="sd", plugin="sd-symbolic", status="success", reason="1 intent", ms=0.4))
    return intent


def thinkingdb_run(request: Request) -> list:
    script = _Script()
    _start(script, request)
    kb = [p for p in KB_ORDER if p not in request.excluded]
    if "kb" in request.pins:
        kb = [request.pins["kb"]]
    script.add(
        PlanBuilt(
            revision=1,
            planner="planner-default",
            stages=(
                PlanStage(stage="sd", candidates=("sd-llm-fast", "sd-symbolic"), reasons=("cheap first", "fallback")),
                PlanStage(
                    stage="kb", candidates=tuple(kb), reasons=tuple(f"{p}: relation words in question" for p in kb)
                ),
                PlanStage(stage="gs", candidates=("gs-symbolic",), reasons=("no LLM endpoint",)),
                PlanStage(stage="val", candidates=("val-grounded",), reasons=("deterministic",)),
            ),
            reasons=("cheap-first", "question uses a relation word: add kb-thinkingdb"),
        )
    )
    _intent(script, "identify", "tools relevant for data pipelines")
    script.add(StageStarted(stage="kb", revision=1))
    winner = None
    for position, plugin in enumerate(kb):
        script.add(AttemptStarted(stage="kb", plugin=plugin, revision=1))
        if plugin == "kb-fast":
            cands = fast_candidates()
            script.add(
                retrieved(
                    plugin,
                    cands,
                    act="identify",
                    query_terms=("tool", "relev", "data", "pipelin"),
                    lanes=("bm25",),
                    sufficient=False,
                    total_candidates=3,
                )
            )
            script.add(
                AttemptFinished(
                    stage="kb", plugin=plugin, status="insufficient", reason="1 kept unit and no preferred role", ms=1.2
                )
            )
            if position + 1 < len(kb):
                script.add(
                    Backtracked(
                        level=1, stage="kb", plugin=plugin, reason=f"{plugin} insufficient, trying {kb[position + 1]}"
                    )
                )
            continue
        if plugin == "kb-thinkingdb":
            cands = tdb_candidates()
            script.add(
                retrieved(
                    plugin,
                    cands,
                    act="identify",
                    query_terms=("tool", "relev", "data", "pipelin"),
                    lanes=("bm25", "tdb"),
                    sufficient=True,
                    total_candidates=4,
                )
            )
            script.add(_proofs())
        else:
            cands = balanced_candidates()
            script.add(
                retrieved(
                    plugin,
                    cands,
                    act="identify",
                    query_terms=("tool", "relev", "data", "pipelin"),
                    lanes=("bm25", "hdc"),
                    escalated=True,
                    sufficient=True,
                    total_candidates=3,
                )
            )
        script.add(
            AttemptFinished(
                stage="kb", plugin=plugin, status="success", reason=f"{sum(c.kept for c in cands)} kept units", ms=2.5
            )
        )
        winner = plugin
        break
    script.add(StageStarted(stage="gs", revision=1))
    script.add(AttemptStarted(stage="gs", plugin="gs-symbolic", revision=1))
    if winner == "kb-thinkingdb":
        answer = (
            "Airflow is relevant for data pipelines: it uses DAG scheduling, which provides retry handling, "
            "and retry handling is relevant for data pipelines."
        )
        cited = (U_AIRFLOW, U_DAG, U_RETRY)
    elif winner == "kb-balanced":
        answer = "Retry handling is relevant for data pipelines. Luigi is a batch workflow tool."
        cited = (U_RETRY, U_LUIGI)
    else:
        answer, cited = "", ()
    status = "success" if cited else "no-context"
    script.add(
        AttemptFinished(stage="gs", plugin="gs-symbolic", status=status, reason=f"{len(cited)} citations", ms=0.3)
    )
    final = "grounded" if cited else "no-context"
    if cited:
        script.add(StageStarted(stage="val", revision=1))
        script.add(AttemptStarted(stage="val", plugin="val-grounded", revision=1))
        script.add(
            Validated(plugin="val-grounded", status="accepted", reason="every sentence cites evidence", revision=1)
        )
        script.add(AttemptFinished(stage="val", plugin="val-grounded", status="accepted", ms=0.2))
    else:
        script.add(
            Backtracked(
                level=3, stage="gs", plugin="gs-symbolic", reason="no sufficient evidence; answering no-context"
            )
        )
        answer = "The knowledge base has no sufficient evidence for this question."
    script.add(_answered(answer, final, cited, "tools relevant for data pipelines"))
    script.add(RunFinished(status=final, timings_ms={"total": 5.1}))
    return script.events


def replan_run(request: Request) -> list:
    script = _Script()
    _start(script, request)
    script.add(
        PlanBuilt(
            revision=1,
            planner="planner-default",
            stages=(
                PlanStage(stage="sd", candidates=("sd-llm-fast", "sd-symbolic")),
                PlanStage(stage="kb", candidates=("kb-fast",)),
                PlanStage(stage="gs", candidates=("gs-symbolic",)),
                PlanStage(stage="val", candidates=("val-grounded",)),
            ),
            reasons=("cheap-first",),
        )
    )
    _intent(script, "compare", "airflow and luigi")
    script.add(StageStarted(stage="kb", revision=1))
    script.add(AttemptStarted(stage="kb", plugin="kb-fast", revision=1))
    fast = fast_candidates("compare")
    script.add(
        retrieved(
            "kb-fast",
            fast,
            act="compare",
            query_terms=("airflow", "luigi"),
            lanes=("bm25",),
            sufficient=True,
            total_candidates=3,
        )
    )
    script.add(AttemptFinished(stage="kb", plugin="kb-fast", status="success", reason="1 kept unit", ms=1.0))
    script.add(StageStarted(stage="gs", revision=1))
    script.add(AttemptStarted(stage="gs", plugin="gs-symbolic", revision=1))
    script.add(AttemptFinished(stage="gs", plugin="gs-symbolic", status="success", reason="1 citation", ms=0.2))
    script.add(StageStarted(stage="val", revision=1))
    script.add(AttemptStarted(stage="val", plugin="val-grounded", revision=1))
    script.add(Validated(plugin="val-grounded", status="rejected", reason="no Comparison unit cited", revision=1))
    script.add(
        AttemptFinished(
            stage="val", plugin="val-grounded", status="rejected", reason="no Comparison unit cited", ms=0.1
        )
    )
    script.add(
        Backtracked(
            level=2,
            stage="val",
            plugin="val-grounded",
            reason="val-grounded rejected the answer (no Comparison unit cited); planner-depth replans",
        )
    )
    script.add(
        PlanBuilt(
            revision=2,
            planner="planner-depth",
            stages=(
                PlanStage(stage="kb", candidates=("kb-thinkingdb", "kb-balanced")),
                PlanStage(stage="gs", candidates=("gs-symbolic",)),
                PlanStage(stage="val", candidates=("val-grounded",)),
            ),
            reasons=("deep-first after rejection",),
        )
    )
    script.add(StageStarted(stage="kb", revision=2))
    script.add(AttemptStarted(stage="kb", plugin="kb-thinkingdb", revision=2))
    script.add(
        AttemptFinished(
            stage="kb", plugin="kb-thinkingdb", status="insufficient", reason="no seed facts match the question", ms=0.8
        )
    )
    script.add(
        Backtracked(
            level=1, stage="kb", plugin="kb-thinkingdb", reason="kb-thinkingdb insufficient, trying kb-balanced"
        )
    )
    script.add(AttemptStarted(stage="kb", plugin="kb-balanced", revision=2))
    balanced = balanced_candidates("compare")
    script.add(
        retrieved(
            "kb-balanced",
            balanced,
            act="compare",
            query_terms=("airflow", "luigi"),
            lanes=("bm25", "hdc"),
            escalated=True,
            sufficient=False,
            total_candidates=3,
        )
    )
    script.add(
        AttemptFinished(
            stage="kb",
            plugin="kb-balanced",
            status="insufficient",
            reason="no preferred role (Comparison, Evaluation)",
            ms=1.9,
        )
    )
    script.add(
        Backtracked(
            level=3,
            stage="kb",
            plugin="kb-balanced",
            reason="only weak evidence; answering with the best weak one (kb-balanced)",
        )
    )
    answer = "Weak: Luigi is a batch workflow tool; the KB has no direct comparison with Airflow."
    script.add(_answered(answer, "weak", (U_LUIGI,), "airflow and luigi"))
    script.add(RunFinished(status="weak", replans=1, timings_ms={"total": 6.0}))
    return script.events


def big_run(request: Request, count: int = 700) -> list:
    script = _Script()
    _start(script, request)
    script.add(
        PlanBuilt(revision=1, planner="planner-default", stages=(PlanStage(stage="kb", candidates=("kb-balanced",)),))
    )
    script.add(StageStarted(stage="kb", revision=1))
    script.add(AttemptStarted(stage="kb", plugin="kb-balanced", revision=1))
    cands = tuple(
        CandidateScore(
            id=f"bulk::chunk-{i // 10:03d}::unit-{i:03d}",
            role="Narrative",
            rank=i + 1,
            bm25_raw=round(10 - i / 100, 3),
            bm25=round(1 - i / 1000, 4),
            fused=round(1 - i / 1000, 4),
            score=round(1 - i / 1000, 4),
            kept=i < 7,
            cut_reason=None if i < 7 else "max_results",
        )
        for i in range(count)
    )
    script.add(
        RetrievalScored(
            plugin="kb-balanced",
            **recorded("kb-balanced", cands),
            act="describe",
            query_terms=("everyth",),
            lanes=("bm25",),
            sufficient=True,
            total_candidates=count,
            candidates=cands,
            evidence_ids=tuple(c.id for c in cands[:7]),
        )
    )
    script.add(AttemptFinished(stage="kb", plugin="kb-balanced", status="success", reason="7 kept units", ms=3.0))
    script.add(AnswerReady(answer="Many units.", status="grounded", evidence_ids=tuple(c.id for c in cands[:2])))
    script.add(RunFinished(status="grounded"))
    return script.events


def short_answer_run(request: Request) -> list:
    """A "who" question answered with a short lead, its type, support check and lexicon link."""
    script = _Script()
    _start(script, request)
    answer = f"Airflow, because: Airflow schedules the nightly data pipelines [{U_AIRFLOW}]."
    detail = AnswerDetail(
        answer_type='person or organisation, from "which tool"',
        lead="Airflow",
        supported=True,
        support="passed; covers 2 of 2 focus terms",
        links=("runs \u2192 schedules: run is a kind of schedule",),
        resolved=("It \u2192 Airflow",),
    )
    script.add(_answered(answer, "grounded", (U_AIRFLOW,), request.question, detail=detail))
    script.add(RunFinished(status="grounded"))
    return script.events


def events_for(request: Request) -> list:
    question = request.question.lower()
    if question.startswith("compare"):
        return replan_run(request)
    if question.startswith("which tool runs"):
        return short_answer_run(request)
    if question.startswith("everything"):
        return big_run(request)
    if question.startswith("cut short"):
        return budget_run(request)
    return thinkingdb_run(request)


def budget_run(request: Request) -> list:
    """The ThinkingDB run with its closure stopped by a budget (the answer may be incomplete)."""
    stopped = {"stop_reason": "budget: maxClosureMb=1024"}
    return [e.model_copy(update=stopped) if isinstance(e, ProofsFound) else e for e in thinkingdb_run(request)]
