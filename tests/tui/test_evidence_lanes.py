"""The evidence breakdown shows synonyms, calibrated HDC fields and what HDC matched."""

from __future__ import annotations

from rich.console import Console

from core.infra.config import load_retrieval_config
from core.kernel.candidates import CandidateScore, FusionExplanation, LaneScore, TermContribution
from core.kernel.events import CutSettings, RetrievalScored
from core.plugins.knowledge import fusion_settings, hdc_settings
from core.units import KnowledgeUnit, Role
from mrptui.screens.evidence_detail import bm25_table, hdc_markup, score_markup

# kb-balanced's fusion as the engine records it, and the candidate's sum under it.
FUSION = fusion_settings(load_retrieval_config().fusion, load_retrieval_config().profiles["kb-balanced"])
SUMMED = FusionExplanation(
    lanes=(
        LaneScore(lane="bm25", raw=3.0, score=1.0, weight=FUSION.weights["bm25"]),
        LaneScore(lane="hdc", score=0.4, weight=FUSION.weights["hdc"]),
    ),
    bonus=FUSION.agreement_bonus,
    fused=FUSION.weights["bm25"] + 0.4 * FUSION.weights["hdc"] + FUSION.agreement_bonus,
)
CANDIDATE = CandidateScore(
    id="shop::c::u1",
    role="Constraint",
    rank=1,
    bm25_raw=3.0,
    bm25=1.0,
    hdc=0.4,
    fused=SUMMED.fused,
    score=SUMMED.fused,
    agreement=True,
    kept=True,
    fusion=SUMMED,
    bm25_terms=(
        TermContribution(
            term="laptop", field="topic", tf=1, idf=1.2, field_weight=1.5, contribution=2.0, via="notebook → laptop"
        ),
        TermContribution(term="return", field="claim", tf=1, idf=0.5, field_weight=1.0, contribution=1.0),
    ),
    hdc_fields={
        "topic": 0.7,
        "claim": 0.65,
        "role": 0.75,
        "acts": 1.0,
        "topic_score": 0.38,
        "claim_score": 0.27,
        "role_score": 0.48,
        "acts_score": 1.0,
        "claim_window": 1.0,
        "gate": 0.38,
    },
    hdc_match=("notebook ≈ a unit word (shared n-grams <no)",),
)
SCORED = RetrievalScored(
    plugin="kb-balanced",
    act="verify",
    query_terms=("return", "notebook", "laptop"),
    lanes=("bm25", "hdc"),
    sufficient=True,
    total_candidates=1,
    candidates=(CANDIDATE,),
    evidence_ids=("shop::c::u1",),
    synonyms=("notebook → laptop (kb/synonyms.txt:3)",),
    fusion=FUSION,
)


def render(renderable) -> str:
    console = Console(width=160, record=True)
    console.print(renderable)
    return console.export_text()


def test_bm25_terms_name_the_synonym_they_came_from() -> None:
    text = render(bm25_table(CANDIDATE))
    assert "via synonym" in text
    laptop_row = next(line for line in text.splitlines() if line.startswith("laptop"))
    assert "notebook → laptop" in laptop_row


def test_hdc_fields_show_the_gate_and_what_matched() -> None:
    config = load_retrieval_config()
    unit = KnowledgeUnit(
        id="shop::c::u1",
        source_id="shop",
        chunk_id="c",
        role=Role.CONSTRAINT,
        topic="Laptop returns",
        claim="Returns are free. Laptops come back within 30 days. Kettles do not.",
    )
    text = render(hdc_markup(CANDIDATE, hdc_settings(config.hdc), unit))
    assert "0.2 × gate 0.380" in text  # role weight, scaled by the better text field
    w = config.hdc.field_weights
    total = w["topic"] * 0.38 + w["claim"] * 0.27 + 0.38 * (w["role"] * 0.48 + w["acts"] * 1.0)
    assert f"sum {total:.3f}" in " ".join(text.split())
    assert "best claim window 2 of 3: “Laptops come back within 30 days.”" in text
    assert "notebook ≈ a unit word (shared n-grams <no)" in text
    assert "best claim window" not in render(hdc_markup(CANDIDATE, hdc_settings(config.hdc)))  # no unit: no text


def test_score_breakdown_lists_the_synonyms_and_the_profile_bonus() -> None:
    config = load_retrieval_config()
    text = score_markup(CANDIDATE, SCORED, config)
    assert "synonym: notebook → laptop (kb/synonyms.txt:3)" in text
    assert "agreement bonus 0.3" in text  # kb-balanced's own bonus
    hdc = FUSION.weights["hdc"]
    assert f"fused {SUMMED.fused:.3f} = 1·1.000 + {hdc:g}·0.400 + 0.3 agreement" in text  # as the engine summed it


def test_a_trace_recorded_before_fusion_was_explained_says_so() -> None:
    old = CANDIDATE.model_copy(update={"fusion": None})
    text = score_markup(old, SCORED.model_copy(update={"fusion": None}), load_retrieval_config())
    assert "does not record how they were summed" in text and "agreement bonus:" not in text


def test_a_unit_kept_as_a_proof_leaf_says_so_in_the_table_and_the_breakdown() -> None:
    from mrptui.widgets.evidence import COLUMNS

    leaf = CANDIDATE.model_copy(update={"rank": 9, "kept_with": "pump feeds gearbox"})
    fate = next(column for column in COLUMNS if column.key == "kept")
    assert (fate.value(CANDIDATE), fate.value(leaf)) == ("kept", "kept: proof")
    text = score_markup(leaf, SCORED, load_retrieval_config())
    assert "kept past maxResults: a leaf of the proof of 'pump feeds gearbox'" in text


def test_a_run_ranked_by_rrf_names_its_rank_weights_and_its_score() -> None:
    rrf = FUSION.model_copy(update={"method": "rrf"})
    text = score_markup(CANDIDATE, SCORED.model_copy(update={"fusion": rrf}), load_retrieval_config())
    assert f"rrf · weights bm25 {FUSION.weights['bm25']:g}" in text and f"RRF k {FUSION.rrf_k}, rank weights" in text
    assert "is the RRF rank score" in text and "score = fused" not in text


def test_the_breakdown_quotes_the_cut_offs_and_hdc_weights_the_run_recorded_not_todays_config() -> None:
    config = load_retrieval_config()
    recorded_hdc = hdc_settings(config.hdc).model_copy(update={"lane_min_score": 0.07, "lane_pool": 33})
    recorded = SCORED.model_copy(
        update={
            "cuts": CutSettings(min_score=0.41, gap_threshold=0.6, max_results=4, top_score=1.3),
            "hdc": recorded_hdc,
        }
    )
    gap_cut = CANDIDATE.model_copy(update={"kept": False, "cut_reason": "gap", "score": 0.5, "hdc": None})
    text = score_markup(gap_cut, recorded, config)
    assert "cut by gap: 0.500 < gapThreshold 0.6 × top 1.300 = 0.780" in text
    assert "minScore 0.41 · gapThreshold 0.6 · maxResults 4 (as the run recorded it)" in text
    assert "below the lane's floor 0.07, or not among its best 33" in text
    weighted = recorded_hdc.model_copy(update={"field_weights": {"topic": 0.5, "claim": 0.5, "role": 0.0, "acts": 0.0}})
    assert f"sum {0.5 * 0.38 + 0.5 * 0.27:.3f}" in " ".join(render(hdc_markup(CANDIDATE, weighted)).split())


def test_a_trace_from_before_the_cut_offs_were_recorded_uses_the_config_and_says_so() -> None:
    config = load_retrieval_config()
    profile = config.profiles["kb-balanced"]
    text = score_markup(CANDIDATE, SCORED, config)  # SCORED records no cut-offs
    assert (
        f"minScore {profile.min_score:g} · gapThreshold {profile.gap_threshold:g} · maxResults "
        f"{profile.max_results} (the current retrieval config: this trace does not record them)"
    ) in text
