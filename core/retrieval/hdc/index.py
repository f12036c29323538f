"""The HDC index of one permitted view: field vectors per unit, scored against a question
(formulas in core/retrieval/hdc/encoding.py and docs/scoring.md), with feedback and match notes."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from core.infra.config import HdcConfig
from core.retrieval.hdc.context import ContextModel
from core.retrieval.hdc.encoding import (
    FIELDS,
    HdcQuery,
    calibrate,
    encode_query,
    field_scores,
    learn_model,
    noise_floor,
    stack_windows,
    token_vectors,
)
from core.retrieval.hdc.scan import hamming
from core.retrieval.hdc.unit_cache import UnitVectorCache
from core.retrieval.hdc.vectors import DIMENSIONS, WORDS, bundle, char_ngrams, hv, similarity
from core.retrieval.row_blocks import RowBlocks
from core.text.tokenizer import tokenize
from core.units import Act, KnowledgeUnit, Role


def feedback_query(index, query: HdcQuery, unit_ids: Sequence[str]) -> HdcQuery:
    """Pseudo-relevance feedback: the question's text vector bundled with the text vectors
    (topic and every claim window) of `unit_ids` found in `index`, the question counting as much
    as all of them together, so the lane also finds units worded like the question's best matches."""
    feedback = [index.text_vector(uid) for uid in unit_ids if uid in index]
    if query.text is None or not feedback:
        return query
    text = bundle(np.vstack([np.repeat(query.text[None], len(feedback), axis=0), *feedback]))
    return HdcQuery(text=text, role=query.role, act=query.act, tokens=query.tokens)


class HdcIndex:
    """Unit field vectors of one permitted view; `unit_ids`, `scores` and every lookup by id follow
    the view's order.

    Topic is an [N, 64] matrix; claim windows are one [W, 64] matrix with `claim_start[i]` the
    first window of vector row i (every unit has at least one). Either may be `RowBlocks`: the
    stored per-file sets read in place, not copied into one (core/store/vectors.py). Their rows
    are then in the files' order, and `order[i]` is the vector row of the view's unit i (None:
    the same order). Role and acts take few distinct values, so they are small tables of
    distinct vectors plus a per-unit index, in the view's order.
    """

    def __init__(
        self,
        unit_ids: list[str],
        topic: np.ndarray | RowBlocks,
        claim: np.ndarray | RowBlocks,
        claim_start: np.ndarray,
        role_table: np.ndarray,
        role_of: np.ndarray,
        acts_table: np.ndarray,
        acts_of: np.ndarray,
        config: HdcConfig,
        model: ContextModel | None = None,
        order: np.ndarray | None = None,
    ):
        self.unit_ids = unit_ids
        self.topic = topic
        self.claim = claim
        self.claim_start = claim_start
        self.role_table = role_table
        self.role_of = role_of
        self.acts_table = acts_table
        self.acts_of = acts_of
        self.config = config
        self.model = model
        self.order = order
        self._floor = noise_floor(config)
        self._scores_by_distance = field_scores(np.arange(DIMENSIONS + 1), self._floor)
        self._row = {uid: i for i, uid in enumerate(unit_ids)}

    @classmethod
    def build(cls, units: Sequence[KnowledgeUnit], config: HdcConfig, cache: UnitVectorCache | None = None) -> HdcIndex:
        """Encode (or take from `cache`) the units' vectors, learning the model first if asked."""
        model = learn_model(units, config)
        topic, windows = (cache if cache is not None else UnitVectorCache()).vectors(units, config, model)
        counts = np.array([len(w) for w in windows], dtype=np.int64)
        return cls.from_vectors(units, config, topic, stack_windows(windows), counts, model)

    @classmethod
    def from_vectors(
        cls,
        units: Sequence[KnowledgeUnit],
        config: HdcConfig,
        topic: np.ndarray | RowBlocks,
        claim: np.ndarray | RowBlocks,
        counts: np.ndarray,
        model: ContextModel | None,
        order: np.ndarray | None = None,
    ) -> HdcIndex:
        """The index over vectors made elsewhere (the index store): vector row r holds
        `counts[r]` claim windows, after those of the rows before it in `claim`; row r is
        units[r], or with `order` the unit i with order[i] == r."""
        # A view's units (core/kb/unit_table.py) give these from their columns, restoring none.
        light = getattr(units, "ids_roles_acts", None)
        if light is not None:
            unit_ids, unit_roles, unit_acts = light()
        else:
            unit_ids, unit_roles, unit_acts = [u.id for u in units], [u.role for u in units], [u.acts for u in units]
        roles = {r: i for i, r in enumerate(dict.fromkeys(unit_roles))}
        act_sets = {a: i for i, a in enumerate(dict.fromkeys(unit_acts))}
        return cls(
            unit_ids=unit_ids,
            topic=topic,
            claim=claim,
            claim_start=np.cumsum(counts) - counts,
            role_table=_role_table(list(roles), config.seed),
            role_of=np.fromiter(map(roles.__getitem__, unit_roles), dtype=np.intp, count=len(unit_roles)),
            acts_table=_acts_table(list(act_sets), config.seed),
            acts_of=np.fromiter(map(act_sets.__getitem__, unit_acts), dtype=np.intp, count=len(unit_acts)),
            config=config,
            model=model,
            order=order,
        )

    def __len__(self) -> int:
        return len(self.unit_ids)

    def query(self, tokens: Sequence[str], act: Act) -> HdcQuery:
        """The query encoded with this index's token vectors (learned ones included)."""
        return encode_query(tokens, act, self.config, self.model)

    def __contains__(self, unit_id: object) -> bool:
        return unit_id in self._row

    def with_feedback(self, query: HdcQuery, unit_ids: Sequence[str]) -> HdcQuery:
        return feedback_query(self, query, unit_ids)

    def _vector_row(self, unit_id: str) -> int:
        row = self._row[unit_id]
        return row if self.order is None else int(self.order[row])

    def _windows(self, row: int) -> np.ndarray:
        """The claim windows of vector row `row`."""
        end = int(self.claim_start[row + 1]) if row + 1 < len(self) else len(self.claim)
        return self.claim[int(self.claim_start[row]) : end]

    def text_vector(self, unit_id: str) -> np.ndarray:
        """F(u): the bundle of a unit's topic and claim-window vectors (what feedback adds)."""
        row = self._vector_row(unit_id)
        return bundle(np.vstack([self.topic[row], self._windows(row)]))

    def scores(self, query: HdcQuery) -> np.ndarray:
        """Final HDC score of every unit, float64; in [0, 1] while the field weights sum to 1."""
        if query.text is None or not len(self):
            return np.zeros(len(self))
        weights = self.config.field_weights
        claim_distances = hamming(self.claim, query.text)
        if len(self.claim) != len(self):  # some unit has several windows: take each unit's best (nearest)
            claim_distances = np.minimum.reduceat(claim_distances, self.claim_start)
        topic_distances = hamming(self.topic, query.text)
        if self.order is not None:
            topic_distances, claim_distances = topic_distances[self.order], claim_distances[self.order]
        # A field's score depends only on its distance (0…4096): one lookup per row, no float temporaries.
        topic, claim = self._scores_by_distance[topic_distances], self._scores_by_distance[claim_distances]
        context = (
            weights.get("role", 0.0) * field_scores(hamming(self.role_table, query.role), self._floor)[self.role_of]
        )
        context += (
            weights.get("acts", 0.0) * field_scores(hamming(self.acts_table, query.act), self._floor)[self.acts_of]
        )
        text = weights.get("topic", 0.0) * topic + weights.get("claim", 0.0) * claim
        return text + np.maximum(topic, claim) * context

    def best_window(self, query: HdcQuery, unit_id: str) -> tuple[int, float]:
        """The claim window that matched best (its index within the unit) and its raw similarity;
        for a query with text (`field_similarities` asks only then)."""
        if query.text is None:
            raise ValueError("best_window needs a query with text")
        distances = hamming(self._windows(self._vector_row(unit_id)), query.text)
        best = int(np.argmin(distances))
        return best, 1.0 - int(distances[best]) / DIMENSIONS

    def field_similarities(self, query: HdcQuery, unit_id: str) -> dict[str, float]:
        """Per field: the raw similarity ("topic") and the calibrated field score ("topic_score");
        "claim_window" is the index of the best claim window, "gate" what role and acts are scaled by.

        Topic and claim are absent when the query has no text to compare.
        """
        row = self._row[unit_id]
        out: dict[str, float] = {}
        if query.text is not None:
            window, claim_sim = self.best_window(query, unit_id)
            out["topic"] = similarity(self.topic[self._vector_row(unit_id)], query.text)
            out["claim"] = claim_sim
            out["claim_window"] = float(window)
        out["role"] = similarity(self.role_table[self.role_of[row]], query.role)
        out["acts"] = similarity(self.acts_table[self.acts_of[row]], query.act)
        for field in (f for f in FIELDS if f in out):
            out[f"{field}_score"] = calibrate(out[field], self._floor)
        out["gate"] = max(out.get("topic_score", 0.0), out.get("claim_score", 0.0))
        return out


# Two token vectors count as "near" above this similarity: 6 standard deviations over chance.
_NEAR = 0.5 + 6 * 0.5 / math.sqrt(DIMENSIONS)
_MAX_NOTES = 4


class Noted(Protocol):
    """What `match_notes` reads of an index: a view's own or one with its current-turn side
    (core/retrieval/hdc/side.py, which imports this module)."""

    @property
    def config(self) -> HdcConfig: ...

    @property
    def model(self) -> ContextModel | None: ...

    def __contains__(self, unit_id: object) -> bool: ...


def match_notes(index: Noted, query: HdcQuery, unit: KnowledgeUnit) -> tuple[str, ...]:
    """Question words the unit does not contain but has a near form of, and why (shared character
    n-grams, or learned from the same units). Events carry no unit text, so a note names only the
    question's word and what it shares; the best claim window is the "claim_window" field."""
    if query.text is None or unit.id not in index:
        return ()
    notes: list[str] = []
    unit_tokens = list(dict.fromkeys(tokenize(f"{unit.topic} {unit.body}")))
    missing = [t for t in dict.fromkeys(query.tokens) if t not in set(unit_tokens)]
    vectors = token_vectors(index.config, index.model)
    if not missing or not unit_tokens or vectors is None:
        return tuple(notes)
    table = vectors([*missing, *unit_tokens])
    for i, token in enumerate(missing):
        sims = 1.0 - hamming(table[len(missing) :], table[i]) / DIMENSIONS
        best = int(np.argmax(sims))
        if sims[best] >= _NEAR and len(notes) < _MAX_NOTES:
            notes.append(f"{token} ≈ a unit word ({_why_near(token, unit_tokens[best], index.config)})")
    return tuple(notes)


def _why_near(a: str, b: str, config: HdcConfig) -> str:
    shared = (
        [g for g in char_ngrams(a, config.char_ngrams) if g in set(char_ngrams(b, config.char_ngrams))]
        if config.char_ngrams
        else []
    )
    if shared:
        return "shared n-grams " + " ".join(shared[:8])
    return "used in the same units"


def _role_table(roles: list[Role], seed: str) -> np.ndarray:
    return np.array([hv(seed, f"role:{r.value}") for r in roles], dtype=np.uint64).reshape(-1, WORDS)


def _acts_table(act_sets: list[tuple[Act, ...]], seed: str) -> np.ndarray:
    rows = [bundle(np.array([hv(seed, f"act:{a.value}") for a in acts])) for acts in act_sets]
    return np.array(rows, dtype=np.uint64).reshape(-1, WORDS)
