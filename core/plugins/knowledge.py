"""kb-fast, kb-balanced and kb-thinkingdb: one plugin class parameterised by its profile (DESIGN §8)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, cast

from core.infra.config import FusionConfig, FusionMethod, HdcConfig, Lane, Profile
from core.infra.embeddings import EmbeddingError
from core.kb.indexes import ViewIndexes
from core.kernel.candidates import CandidateRows
from core.kernel.contract import Descriptor, KbResult, KnowledgePlugin, PlannerHints, PluginType, RunContext, Status
from core.kernel.events import (
    CutSettings,
    FusionSettings,
    HdcSettings,
    ProofNode,
    ProofsFound,
    RetrievalScored,
    RuleStat,
)
from core.kernel.services import Services
from core.memory.followup import refers_back
from core.memory.position import Anchor, Placed, anchor_of, explained, neighbours, placed, weights
from core.question.intent_cues import focus_coverage, unit_text
from core.retrieval.bm25.explain import TermFieldContribution
from core.retrieval.fusion import (
    Candidate,
    RetrievalOutcome,
    agreement_bonus,
    fuse,
    lane_weights,
    normalise_bm25,
    sufficiency,
)
from core.retrieval.lanes import hdc_pool, hdc_question
from core.text.synonyms import Expansion, Synonyms
from core.text.tokenizer import tokenize
from core.units import ACT_PREFERRED_ROLES, Act, Intent, Role

if TYPE_CHECKING:
    from core.retrieval.thinkingdb import Proof, TdbResult

# Fusion's lanes in their order, the order a row explains them in, with their names: iterating
# the enum and reading `.value` cost per call, and a trace has ~200 rows per plugin call.
_LANE_NAMES = tuple((lane, lane.value) for lane in Lane)
_ROLE_NAMES = {role: role.value for role in Role}
# A lone kept unit naming every focus word is decisive only for a question of at least this many:
# "What is Helix?" answered by a Helix constraint is still thin for a definition.
DECISIVE_FOCUS_WORDS = 2

_DESCRIPTORS = {
    "kb-fast": Descriptor(
        id="kb-fast",
        type=PluginType.KB,
        name="Fast lexical retrieval",
        description="BM25 only; at most 3 units; for simple questions where precision matters most",
        cost_class="cheap",
        planner_hints=PlannerHints(
            supported_acts=(Act.DEFINE, Act.IDENTIFY, Act.DESCRIBE, Act.VERIFY),
            preferred_depth="shallow",
            evidence_style=("lexical",),
            expected_latency_ms=2,
        ),
    ),
    "kb-balanced": Descriptor(
        id="kb-balanced",
        type=PluginType.KB,
        name="Balanced hybrid retrieval",
        description="BM25, escalating to HDC/VSA when BM25 keeps too few units",
        cost_class="moderate",
        planner_hints=PlannerHints(
            supported_acts=(Act.COMPARE, Act.EXPLAIN, Act.RECOMMEND, Act.EVALUATE, Act.DIAGNOSE),
            preferred_depth="medium",
            evidence_style=("hybrid",),
            expected_latency_ms=20,
        ),
    ),
    "kb-thinkingdb": Descriptor(
        id="kb-thinkingdb",
        type=PluginType.KB,
        name="BM25 + ThinkingDB closure",
        description="BM25 plus bounded Horn-rule closure over unit triples, with proof trees",
        cost_class="expensive",
        planner_hints=PlannerHints(
            supported_acts=(Act.EXPLAIN, Act.DIAGNOSE, Act.RECOMMEND),
            preferred_depth="deep",
            evidence_style=("symbolic", "lexical"),
            expected_latency_ms=30,
        ),
    ),
}


class ProfileRetriever(KnowledgePlugin):
    def __init__(self, descriptor: Descriptor, services: Services):
        self.descriptor = descriptor
        self._services = services

    @property
    def profile(self) -> Profile:
        return self._services.retrieval.profiles[self.id]

    def retrieve(self, ctx: RunContext, intent: Intent) -> KbResult:
        indexes = self._services.indexes.for_view(ctx.view)
        query = Query.of(intent, self._services.synonyms)
        profile = self.profile
        lanes: dict[Lane, Mapping[str, float]] = {}
        # Each lane is one vectorised step (or the closure, which polls the token itself), so
        # polling between them is enough for a cancelled call to stop within one step.
        ctx.cancel.raise_if_cancelled()
        bm25_raw = self._bm25_raw(indexes, query)
        lanes[Lane.BM25] = normalise_bm25(bm25_raw)
        dense_problem = self._dense_lane(indexes, intent, lanes) if Lane.DENSE in profile.lanes else None
        tdb = None
        if Lane.TDB in profile.lanes:
            ctx.cancel.raise_if_cancelled()
            # The call's cancel token stops the closure between rounds and inside large joins; the
            # result then says "cancelled", and the poll below turns that into a cancelled attempt.
            tdb = indexes.tdb.query(intent.target, stop=ctx.cancel)
            lanes[Lane.TDB] = tdb.lane_scores()
        ctx.cancel.raise_if_cancelled()
        together = _best_proof_leaves(tdb)
        # In a conversation the units a lane found are placed against the last turn's evidence;
        # the units around it are pooled unfound only for a follow-up ("On what date?"): a question
        # that stands alone ("What is the depot gate code?") keeps no unit by position alone.
        anchor = anchor_of(ctx.request.memory, ctx.view)
        # Tagging the question to tell is only worth it when there is an anchor to pull from.
        pooled = _Pooled(anchor, pull=anchor is not None and refers_back(ctx.request.question))
        candidates, cutoffs = self._fuse(ctx, lanes, bm25_raw, query, together, pooled)
        escalated = False
        hdc_query = None
        kept = sum(c.kept for c in candidates)
        if Lane.HDC in profile.lanes or (profile.escalation_lanes and kept < profile.min_acceptable_candidates):
            escalated = Lane.HDC not in profile.lanes
            ctx.cancel.raise_if_cancelled()
            hdc_query = hdc_question(
                indexes.hdc,
                query.terms,
                intent.act,
                self._services.retrieval.hdc,
                list(bm25_raw),
                profile.feedback_units,
            )
            lanes[Lane.HDC] = hdc_pool(indexes.hdc, hdc_query, self._services.retrieval.hdc)
            candidates, cutoffs = self._fuse(ctx, lanes, bm25_raw, query, together, pooled)
        kept_units = [c for c in candidates if c.kept]
        sufficient, reason = sufficiency(
            kept_units,
            intent.act,
            self._exact_ids(indexes, query, kept_units),
            self._names_all(ctx, intent, kept_units),
        )
        if escalated:
            reason = f"BM25 kept {kept} < {profile.min_acceptable_candidates}, escalated to HDC; {reason}"
        if dense_problem:
            reason = f"dense lane unsupported ({dense_problem}), ranked without it; {reason}"
        position = explained(pooled.anchor, pooled.places) if pooled.anchor is not None else ""
        if position:
            reason = f"{reason}; {position}"
        outcome = RetrievalOutcome(
            plugin=self.id,
            act=intent.act,
            query_terms=tuple(query.terms),
            lanes=tuple(lanes),
            candidates=candidates,
            cutoffs=cutoffs,
            sufficient=sufficient,
            reason=reason,
            escalated=escalated,
            lane_details={"tdb": tdb} if tdb is not None else {},
        )
        scored = self._scored_event(ctx, outcome, indexes, query, hdc_query)
        if position and pooled.anchor is not None:
            scored = scored.model_copy(update={"position_anchor": pooled.anchor.record, "position": position})
        trace: list[RetrievalScored | ProofsFound] = [scored]
        if tdb is not None:
            trace.append(proofs_event(self.id, tdb))
        status = Status.SUCCESS if sufficient else Status.INSUFFICIENT
        return KbResult(status=status, reason=reason, outcome=outcome, trace=tuple(trace))

    @staticmethod
    def _dense_lane(indexes: ViewIndexes, intent: Intent, lanes: dict[Lane, Mapping[str, float]]) -> str | None:
        """Adds the dense lane's pool, or returns why it could not run (the other lanes carry on)."""
        lane = indexes.dense_lane
        try:
            if lane is None:
                raise EmbeddingError("no embeddings endpoint configured (config/embeddings.json baseUrl)")
            lanes[Lane.DENSE] = lane.pool(indexes.dense, intent.target)
        except EmbeddingError as exc:
            return exc.reason
        return None

    @staticmethod
    def _exact_ids(indexes: ViewIndexes, query: Query, kept: list[Candidate]) -> tuple[str, ...]:
        """The query's identifiers (hyphenated tokens with a digit) if one kept unit has them all."""
        if not query.identifiers or len(kept) != 1 or kept[0].current_turn:
            return ()
        matched = set(indexes.bm25.matched_terms(query.identifiers, kept[0].id))
        return query.identifiers if matched >= set(query.identifiers) else ()

    @staticmethod
    def _names_all(ctx: RunContext, intent: Intent, kept: list[Candidate]) -> tuple[str, ...]:
        """The question's focus words (at least `DECISIVE_FOCUS_WORDS`) if the one kept unit
        names them all: it is about exactly what was asked, whatever its role."""
        if len(kept) != 1 or kept[0].current_turn:
            return ()
        cues = ctx.question(intent).cues
        unit = ctx.view.get(kept[0].id)
        if unit is None or len(cues.focus_words) < DECISIVE_FOCUS_WORDS:
            return ()
        return cues.focus_words if not focus_coverage(cues, [unit_text(unit)]).missing else ()

    def _bm25_raw(self, indexes: ViewIndexes, query: Query) -> dict[str, float]:
        return indexes.bm25_pool(query.terms, query.preferred_roles, self._services.retrieval.bm25.lane_pool)

    def _fuse(self, ctx: RunContext, lanes, bm25_raw, query: Query, together, pooled: _Pooled):
        pooled.add(ctx, lanes)
        return fuse(
            lanes,
            # Every pooled unit comes from this view's own lanes or neighbours, so the view
            # holds it and `roles_of` found its role (None is only for units it does not hold).
            roles=cast("Mapping[str, Role]", pooled.roles),
            bm25_raw=bm25_raw,
            preferred_roles=query.preferred_roles,
            role_boost=self._services.retrieval.bm25.role_boost,
            config=self._services.retrieval.fusion,
            profile=self.profile,
            current_turn=pooled.current,
            together=together,
            prior={uid: place.prior for uid, place in pooled.places.items()},
        )

    def _scored_event(
        self, ctx: RunContext, outcome: RetrievalOutcome, indexes: ViewIndexes, query: Query, hdc_query
    ) -> RetrievalScored:
        """The event; its rows are built when first read (core/kernel/candidates.py): 200 rows of
        four models each were a fifth of a question's CPU at 100k units, and nothing in a run
        reads them. What a row explains from the view (BM25 terms, HDC fields and notes, the
        shard) is read now, while the run holds the view."""
        limits = self._services.engine.trace
        shown = outcome.candidates[: limits.max_candidates_per_event]
        fusion = fusion_settings(self._services.retrieval.fusion, self.profile)
        explained = [c.id for c in shown[: limits.explained_candidates] if c.bm25_raw]
        terms = dict(zip(explained, indexes.bm25.contributions_of(query.terms, explained), strict=True))
        if hdc_query is not None:  # the HDC notes read the explained units: read together (a cluster fetches them)
            indexes.view.units_of(c.id for c in shown[: limits.explained_candidates])
        explanations = []
        for candidate in shown[: limits.explained_candidates]:
            ctx.cancel.raise_if_cancelled()
            explanations.append(explanation(candidate, indexes, query, hdc_query, terms.get(candidate.id, ())))
        shards = [indexes.shard_of(c.id) for c in shown]

        def fields(index: int) -> dict[str, object]:
            extra = explanations[index] if index < len(explanations) else _UNEXPLAINED
            return candidate_fields(shown[index], shards[index], fusion, extra)

        return RetrievalScored.model_validate(
            {
                "plugin": self.id,
                "act": outcome.act.value,
                "query_terms": outcome.query_terms,
                "lanes": tuple(lane.value for lane in outcome.lanes),
                "escalated": outcome.escalated,
                "sufficient": outcome.sufficient,
                "total_candidates": len(outcome.candidates),
                "synonyms": query.synonym_labels(),
                "candidates": CandidateRows.built_when_read(len(shown), fields),
                "evidence_ids": outcome.evidence_ids,
                "fusion": fusion,
                "cuts": CutSettings(**dataclasses.asdict(outcome.cutoffs)),
                "hdc": hdc_settings(self._services.retrieval.hdc),
                "shards": indexes.shard_count,
            }
        )


def hdc_settings(config: HdcConfig) -> HdcSettings:
    return HdcSettings(
        lane_min_score=config.lane_min_score,
        lane_pool=config.lane_pool,
        field_weights=dict(config.field_weights),
        claim_window=config.claim_window,
    )


def fusion_settings(config: FusionConfig, profile: Profile) -> FusionSettings:
    """The weights, bonus and RRF constants this profile fuses with (docs/scoring.md, Fusion)."""
    return FusionSettings(
        method=config.method.value,
        weights={lane.value: w for lane, w in lane_weights(config, profile, FusionMethod.WEIGHTED).items()},
        agreement_bonus=agreement_bonus(config, profile),
        rrf_k=config.rrf_k,
        rrf_weights={lane.value: w for lane, w in lane_weights(config, profile, FusionMethod.RRF).items()},
    )


def fusion_explanation(candidate: Candidate, fusion: FusionSettings) -> dict[str, object]:
    """The fields of the candidate's `FusionExplanation` (validated with its row): its weighted
    sum, lane by lane (in the lanes' order), as fusion summed it."""
    lanes, weights = candidate.lanes, fusion.weights
    return {
        "lanes": [
            {
                "lane": name,
                "raw": candidate.bm25_raw if lane is Lane.BM25 else None,
                "score": lanes[lane],
                "weight": weights.get(name, 0.0),
            }
            for lane, name in _LANE_NAMES
            if lane in lanes
        ],
        "bonus": fusion.agreement_bonus if candidate.agreement else 0.0,
        "fused": candidate.fused,
    }


class _Pooled:
    """The role of every unit a lane pooled, read from the view's columns without restoring the
    units, which are current-turn units, and, in a conversation, where each stands against the
    last turn's evidence (`anchor`): a fusion after escalation reads only the new ones."""

    def __init__(self, anchor: Anchor | None = None, *, pull: bool = True) -> None:
        self.roles: dict[str, Role | None] = {}
        self.current: frozenset[str] = frozenset()
        self.anchor = anchor
        self.pull = pull  # pool the anchor's neighbours that no lane found
        self.places: dict[str, Placed] = {}

    def add(self, ctx: RunContext, lanes: Mapping[Lane, Mapping[str, float]]) -> None:
        new = [uid for scores in lanes.values() for uid in scores if uid not in self.roles]
        if self.anchor is not None and self.pull and not self.roles:
            new += [uid for uid in neighbours(self.anchor, ctx.view, weights()) if uid not in new]
        roles, current = ctx.view.roles_of(new)
        self.roles.update(roles)
        self.current |= current
        if self.anchor is not None and new:
            self.places.update(placed(self.anchor, new, ctx.view, weights()))


class Query:
    """The stemmed query terms (repeats kept, synonyms added) and the roles the intent's act prefers."""

    def __init__(self, terms: list[str], act: Act, expansion: Expansion | None = None):
        self.terms = terms
        self.act = act
        self.expansion = expansion or Expansion(terms)
        self.preferred_roles: tuple[Role, ...] = ACT_PREFERRED_ROLES[act]
        self.identifiers = tuple(dict.fromkeys(t for t in terms if "-" in t and any(ch.isdigit() for ch in t)))

    @classmethod
    def of(cls, intent: Intent, synonyms: Synonyms | None = None) -> Query:
        expansion = (synonyms or Synonyms()).expand(tokenize(intent.target))
        return cls(expansion.terms, intent.act, expansion)

    def synonym_labels(self) -> tuple[str, ...]:
        return tuple(f"{m.label()} ({m.file}:{m.line})" for m in self.expansion.matches)


def explanation(
    candidate: Candidate,
    indexes: ViewIndexes,
    query: Query,
    hdc_query,
    contributions: Iterable[TermFieldContribution],
) -> dict[str, object]:
    """The fields of an explained trace row read from the view: its BM25 terms (`contributions`)
    and, when the HDC lane ran (`hdc_query`), its HDC field similarities and notes."""
    terms = [
        {
            "term": c.term,
            "field": c.field,
            "tf": c.tf,
            "idf": c.idf,
            "field_weight": c.field_weight,
            "contribution": c.contribution,
            "via": query.expansion.via(c.term),
        }
        for c in contributions
    ]
    hdc_fields = indexes.hdc.field_similarities(hdc_query, candidate.id) if hdc_query is not None else {}
    # The unit is read (restored, from a stored KB) only for the HDC notes of an explained candidate.
    unit = indexes.view.get(candidate.id) if hdc_query is not None else None
    hdc_match: tuple[str, ...] = ()
    if unit is not None:
        from core.retrieval.hdc.index import match_notes  # the lane's notes, only when it ran

        hdc_match = match_notes(indexes.hdc, hdc_query, unit)
    return {"bm25_terms": terms, "hdc_fields": hdc_fields, "hdc_match": hdc_match}


_UNEXPLAINED: dict[str, object] = {"bm25_terms": [], "hdc_fields": {}, "hdc_match": ()}


def candidate_fields(
    candidate: Candidate, shard: int | None, fusion: FusionSettings, explained: dict[str, object]
) -> dict[str, object]:
    """The fields of one trace row (`CandidateScore`); `explained` holds what `explanation` read."""
    lanes = candidate.lanes
    return {
        "id": candidate.id,
        "role": _ROLE_NAMES[candidate.role],
        "rank": candidate.rank,
        "bm25_raw": candidate.bm25_raw,
        "bm25": lanes.get(Lane.BM25),
        "hdc": lanes.get(Lane.HDC),
        "tdb": lanes.get(Lane.TDB),
        "dense": lanes.get(Lane.DENSE),
        "fused": candidate.fused,
        "score": candidate.score,
        "agreement": candidate.agreement,
        "role_boost": candidate.role_boost,
        "kept": candidate.kept,
        "cut_reason": candidate.cut_reason.value if candidate.cut_reason else None,
        "kept_with": candidate.kept_with,
        "current_turn": candidate.current_turn,
        "shard": shard,
        "position": candidate.position,
        **explained,
        "fusion": fusion_explanation(candidate, fusion),
    }


def _best_proof_leaves(tdb: TdbResult | None) -> tuple[str, frozenset[str]] | None:
    """ThinkingDB's first-ranked derived proof (most named entities, then pathScore) and the units
    it rests on: kept together through the maxResults cut (core/retrieval/fusion.py)."""
    best = next((p for p in tdb.proofs if p.rule is not None), None) if tdb is not None else None
    return (best.fact, frozenset(best.leaf_units())) if best is not None else None


def proof_node(proof: Proof) -> ProofNode:
    return ProofNode(
        fact=proof.fact,
        confidence=proof.confidence,
        steps=proof.steps,
        score=proof.score,
        rule=proof.rule,
        weight=proof.weight,
        units=proof.units,
        premises=tuple(proof_node(p) for p in proof.premises),
    )


def proofs_event(plugin_id: str, tdb: TdbResult) -> ProofsFound:
    return ProofsFound(
        plugin=plugin_id,
        stop_reason=tdb.stop_reason,
        seeds=tuple(seed.fact for seed in tdb.seeds),
        rounds=tdb.rounds,
        derived=tdb.derived_count,
        proofs=tuple(proof_node(p) for p in tdb.proofs),
        rule_stats=tuple(
            RuleStat(
                rule=rule_id,
                fired=stats.fired,
                derived=tuple(stats.derived),
                bindings=tuple(stats.bindings),
                first_unmatched_premise=stats.first_unmatched_premise,
            )
            for rule_id, stats in tdb.rule_stats.items()
        ),
    )


def kb_plugins(services: Services) -> list[ProfileRetriever]:
    """One plugin per configured profile that has a descriptor; the factory named in engine.json."""
    return [ProfileRetriever(_DESCRIPTORS[pid], services) for pid in services.retrieval.profiles if pid in _DESCRIPTORS]
