"""A scripted stand-in for `core.kernel.session.Session`: canned, deterministic runs built from core.kernel.events.

Scripts, chosen by the question:
- default: a ThinkingDB-style run (sd-llm-fast unsupported → L1 → sd-symbolic; kb-fast insufficient
  → L1 → kb-thinkingdb with proofs → gs-symbolic → val-grounded accepted → grounded answer).
  Pins and exclusions on the kb stage change the run, so re-runs and diffs differ.
- "compare ...": a replan run (val rejects → L2 replan by planner-depth → L1 → weak answer via L3).
- "everything ...": one kb-balanced retrieval with 700 candidates (for the evidence row cap).
- "boom ...": raises after a few events (the worker error path).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

from core.infra.config import Lane, Profile, RetrievalConfig
from core.infra.diagnostics import Code, Diagnostic
from core.kb.health import Health, health_of
from core.kernel.candidates import CandidateScore, TermContribution
from core.kernel.contract import Request
from core.kernel.events import (
    AnswerDetail,
    AnswerPart,
    AnswerReady,
    AttemptFinished,
    AttemptStarted,
    Backtracked,
    CutSettings,
    FusionSettings,
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
from core.plugins.knowledge import fusion_explanation, fusion_settings, hdc_settings
from core.retrieval.fusion import fuse, normalise_bm25, normalise_by_top
from core.retrieval.rules import RuleSet
from core.units import ACT_PREFERRED_ROLES, Act, Caller, Intent, KnowledgeUnit, Relation, Role, SourceLocation

AS_OF = dt.date(2026, 1, 15)
CALLER = Caller(as_of=AS_OF)

U_AIRFLOW = "tools::chunk-001::unit-001"
U_DAG = "tools::chunk-001::unit-002"
U_RETRY = "ops::chunk-001::unit-001"
U_LUIGI = "tools::chunk-002::unit-001"
U_DBT = "tools::chunk-002::unit-002"
U_SECRET = "internal::chunk-001::unit-001"
U_CMP = "ops::chunk-002::unit-001"


def _unit(uid: str, role: Role, topic: str, body: str, file: str, line: int, triple=None, **extra) -> KnowledgeUnit:
    source, chunk, _ = uid.split("::")
    fields = dict(
        id=uid,
        source_id=source,
        chunk_id=chunk,
        role=role,
        topic=topic,
        location=SourceLocation(file=file, line=line),
        **extra,
    )
    if role is Role.PROCEDURE:
        fields["procedure"] = body
    else:
        fields["claim"] = body
    if triple:
        fields.update(subject=triple[0], relation=Relation(triple[1]), object=triple[2])
    return KnowledgeUnit(**fields)


UNITS: list[KnowledgeUnit] = [
    _unit(
        U_RETRY,
        Role.EXPLANATION,
        "Retry handling",
        "Retry handling is relevant for data pipelines.",
        "sample_kb/ops.md",
        3,
        ("retry handling", "relevant_for", "data pipelines"),
    ),
    _unit(
        U_CMP,
        Role.COMPARISON,
        "Airflow versus Luigi",
        "Airflow schedules DAGs; Luigi chains batch tasks.",
        "sample_kb/ops.md",
        12,
    ),
    _unit(
        U_AIRFLOW,
        Role.DEFINITION,
        "Airflow",
        "Airflow uses DAG scheduling.",
        "sample_kb/tools.md",
        3,
        ("airflow", "uses", "dag scheduling"),
    ),
    _unit(
        U_DAG,
        Role.EXPLANATION,
        "DAG scheduling",
        "DAG scheduling provides retry handling.",
        "sample_kb/tools.md",
        11,
        ("dag scheduling", "provides", "retry handling"),
    ),
    _unit(
        U_LUIGI,
        Role.NARRATIVE,
        "Luigi",
        "Luigi is a batch workflow tool first built at Spotify.",
        "sample_kb/tools.md",
        20,
    ),
    _unit(
        U_DBT,
        Role.EXPLANATION,
        "dbt",
        "dbt depends on a warehouse.",
        "sample_kb/tools.md",
        28,
        ("dbt", "depends_on", "warehouse"),
    ),
]
SECRET = _unit(
    U_SECRET,
    Role.CONSTRAINT,
    "Internal SLA",
    "Pipelines must finish by 06:00.",
    "sample_kb/internal.md",
    2,
    acl=("staff",),
)

DIAGNOSTICS: list[Diagnostic] = [
    Diagnostic(
        code=Code.INVALID_ROLE_VALUE,
        message="role 'Explainer' is not one of the 9 roles",
        file="sample_kb/tools.md",
        line=36,
        col=7,
    ),
    Diagnostic(
        code=Code.RULE_UNKNOWN_RELATION,
        message="relation 'enables' is not one of the 11 relations",
        file="config/thinkingdb.json",
        line=41,
        col=9,
    ),
]

RULES: list[dict] = [
    {
        "id": "tool_to_capability",
        "premises": ["?x uses ?y", "?y provides ?z"],
        "conclusion": "?x has_capability ?z",
        "weight": 0.95,
        "file": "config/thinkingdb.json",
        "line": 4,
        "description": "a tool has what it uses provides",
    },
    {
        "id": "capability_to_relevance",
        "premises": ["?x has_capability ?c", "?c relevant_for ?g"],
        "conclusion": "?x relevant_for ?g",
        "weight": 0.90,
        "file": "config/thinkingdb.json",
        "line": 11,
        "description": "a capability's relevance carries over",
    },
    {
        "id": "dependency_transitive",
        "premises": ["?x depends_on ?y", "?y depends_on ?z"],
        "conclusion": "?x depends_on ?z",
        "weight": 0.92,
        "file": "config/thinkingdb.json",
        "line": 18,
        "description": "dependencies chain",
    },
    {
        "id": "causal_chain",
        "premises": ["?x causes ?y", "?y causes ?z"],
        "conclusion": "?x causes ?z",
        "weight": 0.90,
        "file": "config/thinkingdb.json",
        "line": 25,
        "description": "causes chain",
    },
]

PLUGINS: dict[str, list[str]] = {
    "planner": ["planner-default", "planner-depth"],
    "sd": ["sd-symbolic", "sd-llm-fast", "sd-llm-deep"],
    "kb": ["kb-fast", "kb-balanced", "kb-thinkingdb"],
    "gs": ["gs-symbolic", "gs-llm-fast"],
    "val": ["val-grounded", "val-llm"],
}

KB_ORDER = ("kb-fast", "kb-thinkingdb", "kb-balanced")


# The configuration the fake runs were scored with (pydantic defaults, DESIGN §8 profiles); the
# FakeSession reports it, so the evidence breakdown quotes the same numbers.
FAKE_RETRIEVAL = RetrievalConfig(
    profiles={
        "kb-fast": Profile(
            lanes=(Lane.BM25,), max_results=3, min_score=0.30, gap_threshold=0.50, min_acceptable_candidates=2
        ),
        "kb-balanced": Profile(
            lanes=(Lane.BM25,),
            escalation_lanes=(Lane.HDC,),
            max_results=7,
            min_score=0.15,
            gap_threshold=0.35,
            min_acceptable_candidates=4,
        ),
        "kb-thinkingdb": Profile(
            lanes=(Lane.BM25, Lane.TDB), max_results=8, min_score=0.12, gap_threshold=0.25, min_acceptable_candidates=6
        ),
    }
)


def _terms(*rows: tuple[str, str, int, float, float]) -> tuple[TermContribution, ...]:
    return tuple(
        TermContribution(term=t, field=f, tf=tf, idf=idf, field_weight=w, contribution=round(idf * w * 0.9, 3))
        for t, f, tf, idf, w in rows
    )


T_PIPELINE = _terms(("pipelin", "claim", 1, 1.61, 1.0), ("data", "claim", 1, 1.2, 1.0))
T_PIPELINE_TOPIC = T_PIPELINE + _terms(("pipelin", "topic", 0, 1.61, 1.5))
T_TOOL_CLAIM = _terms(("tool", "claim", 1, 0.8, 1.0))
T_TOOL_ACTS = _terms(("tool", "utilityActs", 1, 0.8, 0.8))
T_TOOL_NOTE = _terms(("tool", "utilityNote", 1, 0.8, 0.6))
ROLES = {unit.id: unit.role for unit in UNITS}


def _fusion(plugin: str) -> FusionSettings:
    """The fusion `plugin` ranks with under FAKE_RETRIEVAL, as the engine records it."""
    return fusion_settings(FAKE_RETRIEVAL.fusion, FAKE_RETRIEVAL.profiles[plugin])


def _recorded(plugin: str, candidates: tuple[CandidateScore, ...]) -> dict[str, object]:
    """What the engine records beside the candidates: the fusion, the cut-offs applied (with the
    top score the gap is of) and the HDC lane's numbers, all under FAKE_RETRIEVAL."""
    profile = FAKE_RETRIEVAL.profiles[plugin]
    top = max((c.score for c in candidates if c.score >= profile.min_score), default=0.0)
    cuts = CutSettings(
        min_score=profile.min_score,
        gap_threshold=profile.gap_threshold,
        max_results=profile.max_results,
        top_score=top,
    )
    return {"fusion": _fusion(plugin), "cuts": cuts, "hdc": hdc_settings(FAKE_RETRIEVAL.hdc)}


def _scored(plugin: str, act: str, *specs) -> tuple[CandidateScore, ...]:
    """Candidates as core's own fusion scores them. A spec is (unit id, BM25 terms, HDC field
    similarities or None, ThinkingDB score or None): the role boost, normalisation, fusion, ranks
    and cuts all come from core.retrieval.fusion with FAKE_RETRIEVAL."""
    config = FAKE_RETRIEVAL
    preferred = ACT_PREFERRED_ROLES[Act(act)]
    boost = {uid: config.bm25.role_boost if ROLES[uid] in preferred else 1.0 for uid, *_ in specs}
    raw = {uid: round(sum(t.contribution for t in terms) * boost[uid], 3) for uid, terms, _, _ in specs if terms}
    hdc = {
        uid: round(sum(config.hdc.field_weights[f] * max(0.0, (sim - 0.5) * 2) for f, sim in sims.items()), 3)
        for uid, _, sims, _ in specs
        if sims
    }
    lanes = {Lane.BM25: normalise_bm25(raw)}
    if hdc:
        lanes[Lane.HDC] = {uid: score for uid, score in hdc.items() if score >= config.hdc.lane_min_score}
    tdb = {uid: score for uid, _, _, score in specs if score is not None}
    if tdb:
        lanes[Lane.TDB] = normalise_by_top(tdb)
    candidates, _ = fuse(
        lanes,
        roles=ROLES,
        bm25_raw=raw,
        preferred_roles=preferred,
        role_boost=config.bm25.role_boost,
        config=config.fusion,
        profile=config.profiles[plugin],
    )
    specs_by_id = {spec[0]: spec for spec in specs}
    return tuple(
        CandidateScore(
            id=c.id,
            role=c.role.value,
            rank=c.rank,
            bm25_raw=c.bm25_raw,
            bm25=c.lane(Lane.BM25),
            hdc=c.lane(Lane.HDC),
            tdb=c.lane(Lane.TDB),
            fused=c.fused,
            score=c.score,
            agreement=c.agreement,
            role_boost=c.role_boost,
            kept=c.kept,
            cut_reason=c.cut_reason.value if c.cut_reason else None,
            bm25_terms=specs_by_id[c.id][1],
            hdc_fields=dict(specs_by_id[c.id][2] or {}),
            fusion=fusion_explanation(c, _fusion(plugin)),
        )
        for c in candidates
    )


def _fast_candidates(act: str = "identify") -> tuple[CandidateScore, ...]:
    return _scored(
        "kb-fast",
        act,
        (U_RETRY, T_PIPELINE, None, None),
        (U_LUIGI, T_TOOL_CLAIM, None, None),
        (U_DBT, T_TOOL_NOTE, None, None),
    )


def _tdb_candidates(act: str = "identify") -> tuple[CandidateScore, ...]:
    return _scored(
        "kb-thinkingdb",
        act,
        (U_RETRY, T_PIPELINE_TOPIC, None, 0.81),
        (U_AIRFLOW, T_TOOL_ACTS, None, 0.81),
        (U_DAG, (), None, 0.81),
        (U_LUIGI, T_TOOL_CLAIM, None, None),
    )


def _balanced_candidates(act: str = "identify") -> tuple[CandidateScore, ...]:
    return _scored(
        "kb-balanced",
        act,
        (U_RETRY, T_PIPELINE, {"topic": 0.56, "claim": 0.79, "role": 0.81, "acts": 0.5}, None),
        (U_LUIGI, T_TOOL_CLAIM, {"topic": 0.65, "claim": 0.72, "role": 1.0, "acts": 0.75}, None),
        (U_AIRFLOW, T_TOOL_ACTS, {"topic": 0.5, "claim": 0.52, "role": 0.6, "acts": 0.5}, None),
    )


def _kept(candidates: tuple[CandidateScore, ...]) -> tuple[str, ...]:
    return tuple(c.id for c in candidates if c.kept)


def _retrieved(plugin: str, cands: tuple[CandidateScore, ...], **fields) -> RetrievalScored:
    """A kb plugin's scored candidates, as it records them, keeping what `_kept` keeps."""
    return RetrievalScored(
        plugin=plugin, **_recorded(plugin, cands), candidates=cands, evidence_ids=_kept(cands), **fields
    )


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
            cands = _fast_candidates()
            script.add(
                _retrieved(
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
            cands = _tdb_candidates()
            script.add(
                _retrieved(
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
            cands = _balanced_candidates()
            script.add(
                _retrieved(
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
        script.add(Validated(plugin="val-grounded", status="accepted", reason="every sentence cites evidence"))
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
    fast = _fast_candidates("compare")
    script.add(
        _retrieved(
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
    script.add(Validated(plugin="val-grounded", status="rejected", reason="no Comparison unit cited"))
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
    balanced = _balanced_candidates("compare")
    script.add(
        _retrieved(
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
            **_recorded("kb-balanced", cands),
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
    return thinkingdb_run(request)


class FakeSession:
    """Implements the Session interface the explorer uses, from the canned scripts above."""

    def __init__(
        self, *, diagnostics: list[Diagnostic] | None = None, retrieval: RetrievalConfig = FAKE_RETRIEVAL
    ) -> None:
        self.retrieval = retrieval
        self.requests: list[Request] = []
        self.warmed: list[Caller] = []
        self.tags_warmed: list[Caller] = []
        self.version = 1
        self.reloads = 0
        self._diagnostics = list(DIAGNOSTICS if diagnostics is None else diagnostics)
        self.why_not_calls: list[tuple[str, str]] = []
        self.costly: frozenset[str] = frozenset()
        # Paths standing for KB files: exports and traces must refuse them.
        self.kb_files: set[Path] = set()

    def run(self, request: Request, steering=None) -> Iterator:
        self.requests.append(request)
        version = self.view_version(request.caller)
        if request.question.lower().startswith("boom"):
            yield from thinkingdb_run(request)[:3]
            raise RuntimeError("engine exploded on purpose")
        for event in events_for(request):
            yield event.model_copy(update={"kb_version": version}) if isinstance(event, RunStarted) else event

    def unit(self, unit_id: str, caller: Caller) -> KnowledgeUnit | None:
        for unit in self.units(caller):
            if unit.id == unit_id:
                return unit
        return None

    def view_version(self, caller: Caller) -> str:
        """Every `touch` stands for a save that changed what the caller sees."""
        return "kb-7f3a" if self.version == 1 else f"kb-7f3a.{self.version}"

    def units(self, caller: Caller) -> list[KnowledgeUnit]:
        units = list(UNITS)
        if "staff" in caller.tags:
            units.append(SECRET)
        return sorted(units, key=lambda u: u.id)

    def diagnostics(self) -> list[Diagnostic]:
        return list(self._diagnostics)

    def health(self, caller: Caller | None = None) -> Health:
        # The fake has no rule file: every canned diagnostic counts as a KB one, and none is
        # author-only, so every caller counts them all.
        return health_of(self._diagnostics, RuleSet(), [])

    def rules(self) -> list[dict]:
        return [dict(rule) for rule in RULES]

    def why_not(self, unit_id: str, question: str, caller: Caller) -> dict[str, str]:
        self.why_not_calls.append((unit_id, question))
        return {
            "visibility": "visible to this caller",
            "bm25": "no shared terms with the question",
            "kb-balanced": "cut by gap: 0.21 < 0.35 × top 0.80",
            "thinkingdb": "no proof reaches this unit",
        }

    def reload(self) -> list[Diagnostic]:
        self.reloads += 1
        return self.diagnostics()

    def fingerprint(self) -> str:
        return f"v{self.version}"

    def owns_file(self, path: Path) -> bool:
        return Path(path).resolve() in self.kb_files

    def warm_up(self, caller: Caller) -> None:
        self.warmed.append(caller)

    def hdc_ready(self, caller: Caller) -> bool:
        return True

    def warm_up_hdc(self, caller: Caller) -> None:
        raise AssertionError("the explorer builds HDC only when the session says it is not ready")

    def warm_up_tags(self, caller: Caller, cancelled=lambda: False, busy=lambda: False, pause=lambda: None) -> int:
        self.tags_warmed.append(caller)
        self.tags_busy = busy
        return 0

    def touch(self, diagnostics: list[Diagnostic] | None = None) -> None:
        """Simulate a saved KB file: a new fingerprint (and optionally new diagnostics)."""
        self.version += 1
        if diagnostics is not None:
            self._diagnostics = list(diagnostics)

    def costly_plugins(self) -> frozenset[str]:
        return self.costly

    def plugin_ids(self) -> dict[str, list[str]]:
        return {stage: list(ids) for stage, ids in PLUGINS.items()}
