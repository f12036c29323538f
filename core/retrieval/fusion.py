"""Lane normalisation, fusion, cut-offs and sufficiency (DESIGN §8).

Every candidate keeps the exact reason it was cut, so a person can ask why a unit was dropped.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import partial
from itertools import repeat, takewhile
from operator import le
from typing import NamedTuple

import numpy as np

from core.infra.config import FusionConfig, FusionMethod, Lane, Profile
from core.units import ACT_PREFERRED_ROLES, Act, Role


class CutReason(StrEnum):
    MIN_SCORE = "min_score"
    GAP = "gap"
    MAX_RESULTS = "max_results"


class Candidate(NamedTuple):
    """One pooled unit's scores and fate. A named tuple, not a frozen dataclass: fusion makes one
    per pooled unit (~1,000 per question at 100k units) and a frozen dataclass's __init__ cost
    ~4 µs each, a named tuple's under 1."""

    id: str
    role: Role
    rank: int
    lanes: Mapping[Lane, float]
    bm25_raw: float | None
    fused: float
    score: float
    agreement: bool
    role_boost: float
    kept: bool
    cut_reason: CutReason | None
    current_turn: bool = False
    # Kept past maxResults as a leaf of this proof (its fact), whose other leaves were kept.
    kept_with: str = ""
    # Added to the score for where the unit stands against the conversation's last evidence
    # (core/memory/position.py); 0 outside a conversation.
    position: float = 0.0

    def lane(self, lane: Lane) -> float | None:
        return self.lanes.get(lane)


# `Candidate._make` without its Python-level call: a row of fields in order becomes a Candidate.
_candidate_of_row = partial(tuple.__new__, Candidate)


@dataclass(frozen=True)
class Cutoffs:
    """The thresholds actually applied, kept so "why was this cut?" can quote the numbers."""

    min_score: float
    gap_threshold: float
    max_results: int
    top_score: float

    @property
    def gap_floor(self) -> float:
        return self.top_score * self.gap_threshold


@dataclass(frozen=True)
class RetrievalOutcome:
    """One retrieval for an intent: the lanes that ran, the fused candidates, where they were cut, and
    whether what is left suffices to answer."""

    plugin: str
    act: Act
    query_terms: tuple[str, ...]
    lanes: tuple[Lane, ...]
    candidates: tuple[Candidate, ...]
    cutoffs: Cutoffs
    sufficient: bool
    reason: str
    escalated: bool = False
    lane_details: Mapping[str, object] = field(default_factory=dict)

    @property
    def kept(self) -> tuple[Candidate, ...]:
        return tuple(c for c in self.candidates if c.kept)

    @property
    def evidence_ids(self) -> tuple[str, ...]:
        return tuple(c.id for c in self.candidates if c.kept)

    def candidate(self, unit_id: str) -> Candidate | None:
        return next((c for c in self.candidates if c.id == unit_id), None)


def normalise_bm25(raw: Mapping[str, float]) -> dict[str, float]:
    """Divide by max(1, top raw) so weak lexical matches are not stretched to 1."""
    top = max(raw.values(), default=0.0)
    scale = max(1.0, top)
    return {uid: score / scale for uid, score in raw.items() if score > 0}


def normalise_by_top(scores: Mapping[str, float]) -> dict[str, float]:
    """Scores over the top one. (kb-thinkingdb's lane is `TdbResult.lane_scores`: over the best
    proof's pathScore, with units in role order.)"""
    top = max(scores.values(), default=0.0)
    if top <= 0:
        return {}
    return {uid: score / top for uid, score in scores.items() if score > 0}


def agreeing(lanes: Mapping[Lane, Mapping[str, float]], config: FusionConfig) -> set[str]:
    """Units that every lane that found anything (at least two) scores at or above
    `agreementMinScore`: agreement on a faint match is no evidence, so it earns no bonus."""
    active = [scores for scores in lanes.values() if scores]
    if len(active) < 2:
        return set()
    common = set.intersection(*(set(scores) for scores in active))
    return {uid for uid in common if all(scores[uid] >= config.agreement_min_score for scores in active)}


def _weighted(
    lanes: Mapping[Lane, Mapping[str, float]], config: FusionConfig, weights: Mapping[Lane, float], bonus: float
) -> dict[str, float]:
    """Σ weight × lane score, plus the agreement bonus for the units `agreeing` returns."""
    fused: dict[str, float] = {}
    for lane, scores in lanes.items():
        weight = weights.get(lane, 0.0)
        if not fused:  # the first lane's pool in one step (0.0 + x is the float the sum below adds)
            fused = {uid: 0.0 + weight * score for uid, score in scores.items()}
            continue
        for uid, score in scores.items():
            fused[uid] = fused.get(uid, 0.0) + weight * score
    for uid in agreeing(lanes, config):
        fused[uid] += bonus
    return fused


def _reciprocal_rank(
    lanes: Mapping[Lane, Mapping[str, float]], config: FusionConfig, weights: Mapping[Lane, float]
) -> dict[str, float]:
    """Weighted RRF over equal-depth pools: Σ weight / (k + rank), every lane's ranks counted down
    to `rrfDepth`, scaled so a unit ranked first by every lane that ran scores 1.0."""
    active = {lane: scores for lane, scores in lanes.items() if scores and weights.get(lane, 0.0) > 0}
    if not active:
        return {}
    best = sum(weights[lane] for lane in active) / (config.rrf_k + 1)
    fused: dict[str, float] = {}
    for lane, scores in active.items():
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[: config.rrf_depth]
        for rank, (uid, _) in enumerate(ranked, start=1):
            fused[uid] = fused.get(uid, 0.0) + weights[lane] / (config.rrf_k + rank)
    return {uid: value / best for uid, value in fused.items()}


def lane_weights(
    config: FusionConfig, profile: Profile | None = None, method: FusionMethod | None = None
) -> dict[Lane, float]:
    """The lane weights of `method` (default `config.method`): weights for the weighted sum,
    rrfWeights for RRF; the profile's own weights take precedence."""
    base = config.rrf_weights if (method or config.method) is FusionMethod.RRF else config.weights
    return {**base, **(profile.weights if profile is not None and profile.weights else {})}


def agreement_bonus(config: FusionConfig, profile: Profile | None = None) -> float:
    """The profile's agreement bonus when it sets one, else the fusion config's."""
    if profile is not None and profile.agreement_bonus is not None:
        return profile.agreement_bonus
    return config.agreement_bonus


def fused_scores(
    lanes: Mapping[Lane, Mapping[str, float]], config: FusionConfig, profile: Profile | None = None
) -> dict[str, float]:
    """The score fusion ranks by: weighted sum (with agreement bonus) or scaled RRF, per `config.method`."""
    weights = lane_weights(config, profile)
    if config.method is FusionMethod.RRF:
        return _reciprocal_rank(lanes, config, weights)
    return _weighted(lanes, config, weights, agreement_bonus(config, profile))


def fuse(
    lanes: Mapping[Lane, Mapping[str, float]],
    *,
    roles: Mapping[str, Role],
    bm25_raw: Mapping[str, float],
    preferred_roles: Sequence[Role],
    role_boost: float,
    config: FusionConfig,
    profile: Profile,
    current_turn: frozenset[str] = frozenset(),
    together: tuple[str, frozenset[str]] | None = None,
    prior: Mapping[str, float] | None = None,
) -> tuple[tuple[Candidate, ...], Cutoffs]:
    """Fuse normalised lane scores, then apply minScore, the gap and maxResults, in that order.

    `together` is a proof (its fact and leaf units): when one of its leaves is kept, the others
    that only maxResults cut are kept too, since a proof is evidence only whole. `prior`: a
    pooled unit's conversation-position prior, added to its score before ranking and cut-offs."""
    summed = lane_weights(config, profile, FusionMethod.WEIGHTED)
    weighted = _weighted(lanes, config, summed, agreement_bonus(config, profile))
    agreed = agreeing(lanes, config)
    ranked_by = fused_scores(lanes, config, profile) if config.method is FusionMethod.RRF else weighted
    if prior:
        # A unit only the prior pooled (a neighbour of the last evidence no lane found) starts at 0.
        ranked_by = {uid: ranked_by.get(uid, 0.0) + prior.get(uid, 0.0) for uid in ranked_by.keys() | prior.keys()}
    order, scores_in_order = _ranked(ranked_by)
    # Read once, not per pooled unit.
    min_score, max_results = profile.min_score, profile.max_results
    top = scores_in_order[0] if scores_in_order and scores_in_order[0] >= min_score else 0.0
    cutoffs = Cutoffs(min_score, profile.gap_threshold, max_results, top)
    cuts = _cuts(scores_in_order, min_score, cutoffs.gap_floor, max_results)
    roles_in_order = list(map(roles.__getitem__, order))
    boost_of = {role: role_boost if role in preferred_roles else 1.0 for role in set(roles_in_order)}
    # Column by column, then one tuple per unit: the per-unit Python loop this replaces was
    # most of fusion's time over ~1,000 pooled units.
    # A column that is the same for every unit (no agreement, no current-turn unit, no prior: a
    # question's first fusion) is repeated rather than looked up unit by unit.
    columns = (
        order,
        roles_in_order,
        range(1, len(order) + 1),
        _lane_scores(lanes, order, every_pooled=ranked_by is weighted),
        map(bm25_raw.get, order),
        scores_in_order if ranked_by is weighted else map(weighted.get, order, repeat(0.0)),
        scores_in_order,
        map(agreed.__contains__, order) if agreed else repeat(False),
        map(boost_of.__getitem__, roles_in_order),
        [cut is None for cut in cuts],
        cuts,
        map(current_turn.__contains__, order) if current_turn else repeat(False),
        repeat(""),
        map(prior.get, order, repeat(0.0)) if prior else repeat(0.0),
    )
    candidates = list(map(_candidate_of_row, zip(*columns)))
    return _keep_together(candidates, together), cutoffs


def _ranked(score_of: Mapping[str, float]) -> tuple[list[str], list[float]]:
    """Ids by score descending, then id ascending, and their scores. The lanes pool in their own
    rank order, so sorting by score alone is nearly linear; only runs of tied scores (BM25 ties
    often: equal counts in equally long units) are then put in id order, not every id compared."""
    order = list(score_of)
    order.sort(key=score_of.__getitem__, reverse=True)
    listed = list(map(score_of.__getitem__, order))
    scores = np.array(listed, dtype=np.float64)
    starts = np.flatnonzero(np.concatenate(([True], scores[1:] != scores[:-1])))
    ends = np.append(starts[1:], len(order))
    tied = ends - starts > 1
    for start, end in zip(starts[tied].tolist(), ends[tied].tolist(), strict=True):
        order[start:end] = sorted(order[start:end])
    return order, listed


def _cuts(scores: list[float], min_score: float, gap_floor: float, max_results: int) -> list[CutReason | None]:
    """Each ranked unit's cut: minScore, then the gap; maxResults is counted over the units these
    two leave. The scores descend, so each cut holds a run: the units kept, those past
    maxResults, the gap's, minScore's; each run's length is counted, not each unit tested."""
    above_min = sum(1 for _ in takewhile(partial(le, min_score), scores))
    passed = sum(1 for _ in takewhile(partial(le, gap_floor), scores[:above_min]))
    kept = min(passed, max_results)
    return [
        *repeat(None, kept),
        *repeat(CutReason.MAX_RESULTS, passed - kept),
        *repeat(CutReason.GAP, above_min - passed),
        *repeat(CutReason.MIN_SCORE, len(scores) - above_min),
    ]


def _lane_scores(
    lanes: Mapping[Lane, Mapping[str, float]], order: list[str], *, every_pooled: bool
) -> list[dict[Lane, float]]:
    """Each ranked unit's lane scores, in the lanes' order. `every_pooled`: `order` is every unit
    the lanes pooled (ranked by the weighted sum, no prior), so with one lane each unit has
    its score there (a question's first fusion). Otherwise filled lane by lane, one pass over
    each lane's pool rather than a lookup of every unit in every lane."""
    if every_pooled and len(lanes) == 1:
        ((lane, scores),) = lanes.items()
        return [{lane: value} for value in map(scores.__getitem__, order)]
    found: dict[str, dict[Lane, float]] = {uid: {} for uid in order}
    for lane, scores in lanes.items():
        for uid, value in scores.items():
            if (into := found.get(uid)) is not None:
                into[lane] = value
    return list(found.values())


def _keep_together(candidates: list[Candidate], together: tuple[str, frozenset[str]] | None) -> tuple[Candidate, ...]:
    if together is None:
        return tuple(candidates)
    fact, members = together
    if not any(c.kept for c in candidates if c.id in members):
        return tuple(candidates)
    return tuple(
        c._replace(kept=True, cut_reason=None, kept_with=fact)
        if c.id in members and c.cut_reason is CutReason.MAX_RESULTS
        else c
        for c in candidates
    )


def sufficiency(
    kept: Sequence[Candidate], act: Act, exact_ids: Sequence[str] = (), names_all: Sequence[str] = ()
) -> tuple[bool, str]:
    """Sufficient = at least one kept unit and (a preferred role is covered or at least two units).

    Our additions: a kept unit that contains every identifier the query names (`exact_ids`, e.g.
    a rule code) is sufficient on its own, since an exact code is a decisive signal (seed 002);
    so is a lone kept unit that names every focus word of a question of two or more
    (`names_all`): "What is the vault door combination?" kept only the Constraint that states it,
    and every candidate after it kept the same unit, so the answer was labelled insufficient.
    """
    if not kept:
        return False, "no candidate passed the cut-offs"
    preferred = ACT_PREFERRED_ROLES[act]
    if any(c.role in preferred for c in kept):
        return True, f"{len(kept)} kept; preferred role for {act.value} covered"
    if len(kept) >= 2:
        return True, f"{len(kept)} kept"
    if exact_ids:
        return True, f"1 kept and it names {', '.join(exact_ids)} exactly"
    if names_all:
        return True, f"1 kept and it names every word the question asks about ({', '.join(names_all)})"
    return False, f"only 1 unit kept and its role ({kept[0].role.value}) is not preferred for {act.value}"


def cut_explanation(candidate: Candidate, cutoffs: Cutoffs) -> str:
    """One sentence quoting the numbers behind a candidate's fate."""
    if candidate.cut_reason is CutReason.MIN_SCORE:
        return f"cut by minScore: {candidate.score:.3f} < {cutoffs.min_score:.2f}"
    if candidate.cut_reason is CutReason.GAP:
        return (
            f"cut by gap: {candidate.score:.3f} < {cutoffs.gap_threshold:.2f} × top {cutoffs.top_score:.3f}"
            f" = {cutoffs.gap_floor:.3f}"
        )
    if candidate.cut_reason is CutReason.MAX_RESULTS:
        return f"cut by maxResults: rank {candidate.rank} after {cutoffs.max_results} kept units"
    if candidate.kept_with:
        return (
            f"kept at rank {candidate.rank} past maxResults {cutoffs.max_results}: a leaf of the proof of "
            f"'{candidate.kept_with}', whose other leaves were kept"
        )
    return f"kept at rank {candidate.rank} with score {candidate.score:.3f}"
