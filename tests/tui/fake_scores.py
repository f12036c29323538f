"""The fake runs' scored retrievals: the retrieval configuration they were scored with, each
profile's candidates with their BM25 terms and fusion, and what the engine records beside them."""

from __future__ import annotations

from fake_kb import U_AIRFLOW, U_DAG, U_DBT, U_LUIGI, U_RETRY, UNITS

from core.infra.config import Lane, Profile, RetrievalConfig
from core.kernel.candidates import CandidateScore, TermContribution
from core.kernel.events import CutSettings, FusionSettings, RetrievalScored
from core.plugins.knowledge import fusion_explanation, fusion_settings, hdc_settings
from core.retrieval.fusion import fuse, normalise_bm25, normalise_by_top
from core.units import ACT_PREFERRED_ROLES, Act

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


def recorded(plugin: str, candidates: tuple[CandidateScore, ...]) -> dict[str, object]:
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


def fast_candidates(act: str = "identify") -> tuple[CandidateScore, ...]:
    return _scored(
        "kb-fast",
        act,
        (U_RETRY, T_PIPELINE, None, None),
        (U_LUIGI, T_TOOL_CLAIM, None, None),
        (U_DBT, T_TOOL_NOTE, None, None),
    )


def tdb_candidates(act: str = "identify") -> tuple[CandidateScore, ...]:
    return _scored(
        "kb-thinkingdb",
        act,
        (U_RETRY, T_PIPELINE_TOPIC, None, 0.81),
        (U_AIRFLOW, T_TOOL_ACTS, None, 0.81),
        (U_DAG, (), None, 0.81),
        (U_LUIGI, T_TOOL_CLAIM, None, None),
    )


def balanced_candidates(act: str = "identify") -> tuple[CandidateScore, ...]:
    return _scored(
        "kb-balanced",
        act,
        (U_RETRY, T_PIPELINE, {"topic": 0.56, "claim": 0.79, "role": 0.81, "acts": 0.5}, None),
        (U_LUIGI, T_TOOL_CLAIM, {"topic": 0.65, "claim": 0.72, "role": 1.0, "acts": 0.75}, None),
        (U_AIRFLOW, T_TOOL_ACTS, {"topic": 0.5, "claim": 0.52, "role": 0.6, "acts": 0.5}, None),
    )


def _kept(candidates: tuple[CandidateScore, ...]) -> tuple[str, ...]:
    return tuple(c.id for c in candidates if c.kept)


def retrieved(plugin: str, cands: tuple[CandidateScore, ...], **fields) -> RetrievalScored:
    """A kb plugin's scored candidates, as it records them, keeping what `_kept` keeps."""
    return RetrievalScored(
        plugin=plugin, **recorded(plugin, cands), candidates=cands, evidence_ids=_kept(cands), **fields
    )
