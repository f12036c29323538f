"""4096-bit hyperdimensional (VSA) retrieval lane (seed 000, DESIGN §7); vector algebra in hdc_vectors.

Fields: topic, claim (the procedure when there is no claim), role, acts. Topic and claim are
n-gram bundles of the unit's text; with `claimWindow` = k > 0 the claim is also cut into windows of
k consecutive sentences (stride one sentence) and the claim field takes its best window, so one
matching sentence of a long abstract is not drowned in a single 200-token majority vote.

Calibration (docs/scoring.md). For a field vector and the query vector, s = 1 − hamming / 2048
(= 2·sim − 1). Two unrelated 4096-bit vectors give s with mean 0 and standard deviation
1/√4096 = 1/64, so the field score subtracts a noise floor z = noiseSigmas / 64 and rescales:

    fieldScore = max(0, (s − z) / (1 − z))

An unrelated field then scores exactly 0 unless its s lies noiseSigmas standard deviations above
chance (p ≈ 0.13 % at the default 3). Role and acts carry no topical signal (every unit of a
preferred role matches them equally), so they only add alongside text similarity:

    text  = w_topic · topic + w_claim · claim
    final = text + max(topic, claim) · (w_role · role + w_acts · acts)

A unit sharing nothing with the question scores ≈ 0 whatever its role, so `laneMinScore` and the
profiles' `minScore` compare against a score that means "this much text matched".
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path

import numpy as np

from core.config import HdcConfig
from core.retrieval.hdc_context import ContextModel
from core.retrieval.hdc_scan import hamming
from core.retrieval.hdc_vectors import (
    DIMENSIONS,
    TokenVectors,
    WORDS,
    bind,
    bundle,
    char_ngrams,
    encode_ngrams,
    encode_ngrams_batch,
    hv,
    hv_table,
    permute,
    similarity,
    token_table,
)
from core.text import tokenize
from core.units import ACT_PREFERRED_ROLES, Act, KnowledgeUnit, Role

__all__ = [
    "DIMENSIONS", "FIELDS", "WORDS", "HdcIndex", "HdcQuery", "UnitVectorCache", "bind", "bundle", "char_ngrams",
    "encode_ngrams", "encode_ngrams_batch", "encode_query", "feedback_query", "field_scores", "hamming", "hv", "hv_table",
    "calibrate", "encode_units", "encoding_options", "learn_model", "match_notes", "noise_floor", "permute",
    "similarity", "token_table", "token_vectors", "unit_windows", "window_sentences",
]

FIELDS = ("topic", "claim", "role", "acts")


def noise_floor(config: HdcConfig) -> float:
    """z: `noiseSigmas` standard deviations of s between unrelated vectors (1/√D each)."""
    return config.noise_sigmas / math.sqrt(DIMENSIONS)


def unit_windows(body: str, sentences: int) -> list[str]:
    """The claim windows: `sentences` consecutive sentences, stride one; the whole text when 0."""
    parts = window_sentences(body, sentences)
    if parts is None:
        return [body]
    return [" ".join(parts[i : i + sentences]) for i in range(len(parts) - sentences + 1)]


def window_sentences(body: str, sentences: int) -> tuple[str, ...] | None:
    """The body's sentences when it makes more than one window of `sentences`, else None."""
    if sentences <= 0:
        return None
    # Sentences end only at a run of . ! ? or a line break: with fewer marks than `sentences`
    # and one line there cannot be more than `sentences` of them, so skip the splitter.
    if "\n" not in body and body.count(".") + body.count("!") + body.count("?") < sentences:
        return None
    parts = _sentences(body)
    return parts if len(parts) > sentences else None


@lru_cache(maxsize=1 << 14)
def _sentences(text: str) -> tuple[str, ...]:
    from core.cnl.plaintext import split_sentences  # the reader's sentence rules, loaded on first use

    return tuple(token.text for token in split_sentences(text)) or (text,)


def token_vectors(config: HdcConfig, model: ContextModel | None = None) -> TokenVectors | None:
    """How tokens become vectors under `config`: learned, character n-grams, or plain (None)."""
    if model is not None:
        return model
    if config.char_ngrams:
        return partial(token_table, config.seed, char_n=config.char_ngrams)
    return None


def encoding_options(config: HdcConfig, model: ContextModel | None) -> dict[str, object]:
    """Everything that changes a unit's vectors (not its scores), for the index store's key: the
    seed, dimensions, claim windows, character n-grams, the learned model and the encoder's code."""
    return {
        "seed": config.seed,
        "dimensions": DIMENSIONS,
        "claimWindow": config.claim_window,
        "charNgrams": config.char_ngrams,
        "contextModel": model.digest if model is not None else "",
        "encoder": _encoder_digest(),
    }


@lru_cache(maxsize=1)
def _encoder_digest() -> str:
    here = Path(__file__).resolve().parent
    hasher = hashlib.sha256()
    for name in ("hdc.py", "hdc_vectors.py", "hdc_context.py", "hdc_tokens.py"):
        hasher.update(name.encode() + b"\0" + (here / name).read_bytes())
    return hasher.hexdigest()[:16]


def encode_units(
    units: Sequence[KnowledgeUnit], config: HdcConfig, model: ContextModel | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Topic vectors [N, 64], every unit's claim windows stacked [W, 64], windows per unit [N]."""
    topic, windows = _encode_units(units, config, token_vectors(config, model))
    return topic, _stack(windows), np.array([len(w) for w in windows], dtype=np.int64)


def _stack(windows: Sequence[np.ndarray]) -> np.ndarray:
    return np.concatenate(windows) if len(windows) else np.zeros((0, WORDS), dtype=np.uint64)


def learn_model(units: Sequence[KnowledgeUnit], config: HdcConfig) -> ContextModel | None:
    """The view's learned token vectors when `contextVectors` asks for them, else None."""
    return ContextModel.learn(units, config) if config.context_vectors else None


def _unit_digest(unit: KnowledgeUnit, config: HdcConfig, model: ContextModel | None) -> bytes:
    options = f"{config.seed}\x00{config.claim_window}\x00{config.char_ngrams}\x00{model.digest if model else ''}"
    return hashlib.blake2b(f"{options}\x00{unit.topic}\x00{unit.body}".encode(), digest_size=16).digest()


class UnitVectorCache:
    """Topic and claim-window vectors per unit id, reused across rebuilds while the unit's text
    (and the encoding options) are unchanged; `encoded` counts units encoded so far."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[bytes, np.ndarray, np.ndarray]] = {}
        self.encoded = 0

    def vectors(
        self, units: Sequence[KnowledgeUnit], config: HdcConfig, model: ContextModel | None = None
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """Topic vectors [N, 64] and each unit's claim windows [k, 64], encoding only new or edited units."""
        digests = [_unit_digest(u, config, model) for u in units]
        stale = [i for i, (u, d) in enumerate(zip(units, digests, strict=True)) if self._digest(u.id) != d]
        topic, windows = _encode_units([units[i] for i in stale], config, token_vectors(config, model))
        for j, i in enumerate(stale):
            self._entries[units[i].id] = (digests[i], topic[j], windows[j])
        self.encoded += len(stale)
        entries = [self._entries[u.id] for u in units]
        return np.array([e[1] for e in entries], dtype=np.uint64).reshape(-1, WORDS), [e[2] for e in entries]

    def _digest(self, unit_id: str) -> bytes | None:
        entry = self._entries.get(unit_id)
        return entry[0] if entry else None


def _encode_units(
    units: Sequence[KnowledgeUnit], config: HdcConfig, vectors_of: TokenVectors | None
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Topic vectors and per-unit claim-window vectors; read-only, as the cache shares them."""
    windows = [unit_windows(u.body, config.claim_window) for u in units]
    texts = [u.topic for u in units] + [w for ws in windows for w in ws]
    vectors = encode_ngrams_batch([tokenize(t) for t in texts], config.seed, vectors_of)
    vectors.flags.writeable = False
    bounds = np.cumsum([len(units)] + [len(ws) for ws in windows])
    return vectors[: len(units)], [vectors[bounds[i] : bounds[i + 1]] for i in range(len(units))]


@dataclass(frozen=True)
class HdcQuery:
    """A query's field vectors; `text` is None when no query token survived the text pipeline."""

    text: np.ndarray | None
    role: np.ndarray
    act: np.ndarray
    tokens: tuple[str, ...] = ()


def encode_query(tokens: Sequence[str], act: Act, config: HdcConfig, model: ContextModel | None = None) -> HdcQuery:
    """Query tokens (already through core.text) for topic and claim, preferred roles, the act.

    With learned token vectors, pass the index's model (or use `HdcIndex.query`)."""
    roles = np.array([hv(config.seed, f"role:{r.value}") for r in ACT_PREFERRED_ROLES[act]])
    return HdcQuery(
        text=encode_ngrams(tokens, config.seed, token_vectors(config, model)) if tokens else None,
        role=bundle(roles),
        act=hv(config.seed, f"act:{act.value}"),
        tokens=tuple(tokens),
    )


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
    """Unit field vectors of one permitted view; rows follow `unit_ids`.

    Topic is an [N, 64] matrix; claim windows are one [W, 64] matrix with `claim_start[i]` the
    first window of unit i (every unit has at least one). Role and acts take few distinct values,
    so they are small tables of distinct vectors plus a per-unit index.
    """

    def __init__(
        self,
        unit_ids: list[str],
        topic: np.ndarray,
        claim: np.ndarray,
        claim_start: np.ndarray,
        role_table: np.ndarray,
        role_of: np.ndarray,
        acts_table: np.ndarray,
        acts_of: np.ndarray,
        config: HdcConfig,
        model: ContextModel | None = None,
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
        self._floor = noise_floor(config)
        self._scores_by_distance = field_scores(np.arange(DIMENSIONS + 1), self._floor)
        self._row = {uid: i for i, uid in enumerate(unit_ids)}

    @classmethod
    def build(
        cls, units: Sequence[KnowledgeUnit], config: HdcConfig, cache: UnitVectorCache | None = None
    ) -> HdcIndex:
        """Encode (or take from `cache`) the units' vectors, learning the model first if asked."""
        model = learn_model(units, config)
        topic, windows = (cache if cache is not None else UnitVectorCache()).vectors(units, config, model)
        counts = np.array([len(w) for w in windows], dtype=np.int64)
        return cls.from_vectors(units, config, topic, _stack(windows), counts, model)

    @classmethod
    def from_vectors(
        cls,
        units: Sequence[KnowledgeUnit],
        config: HdcConfig,
        topic: np.ndarray,
        claim: np.ndarray,
        counts: np.ndarray,
        model: ContextModel | None,
    ) -> HdcIndex:
        """The index over vectors made elsewhere (the index store): row i is units[i], whose
        `counts[i]` claim windows follow those of the units before it in `claim`."""
        # A view's units (core/unit_table.py) give these from their columns, restoring none.
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

    def text_vector(self, unit_id: str) -> np.ndarray:
        """F(u): the bundle of a unit's topic and claim-window vectors (what feedback adds)."""
        row = self._row[unit_id]
        return bundle(np.vstack([self.topic[row], self.claim[self.claim_start[row] : self._claim_end(row)]]))

    def _claim_end(self, row: int) -> int:
        return int(self.claim_start[row + 1]) if row + 1 < len(self) else len(self.claim)

    def scores(self, query: HdcQuery) -> np.ndarray:
        """Final HDC score of every unit, float64; in [0, 1] while the field weights sum to 1."""
        if query.text is None or not len(self):
            return np.zeros(len(self))
        weights = self.config.field_weights
        claim_distances = hamming(self.claim, query.text)
        if len(self.claim) != len(self):  # some unit has several windows: take each unit's best (nearest)
            claim_distances = np.minimum.reduceat(claim_distances, self.claim_start)
        # A field's score depends only on its distance (0…4096): one lookup per row, no float temporaries.
        topic, claim = self._scores_by_distance[hamming(self.topic, query.text)], self._scores_by_distance[claim_distances]
        context = weights.get("role", 0.0) * field_scores(hamming(self.role_table, query.role), self._floor)[self.role_of]
        context += weights.get("acts", 0.0) * field_scores(hamming(self.acts_table, query.act), self._floor)[self.acts_of]
        text = weights.get("topic", 0.0) * topic + weights.get("claim", 0.0) * claim
        return text + np.maximum(topic, claim) * context

    def best_window(self, query: HdcQuery, unit_id: str) -> tuple[int, float]:
        """The claim window that matched best (its index within the unit) and its raw similarity."""
        row = self._row[unit_id]
        end = self.claim_start[row + 1] if row + 1 < len(self) else len(self.claim)
        distances = hamming(self.claim[self.claim_start[row] : end], query.text)
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
            out["topic"] = similarity(self.topic[row], query.text)
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


def match_notes(index: HdcIndex, query: HdcQuery, unit: KnowledgeUnit) -> tuple[str, ...]:
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
    shared = [g for g in char_ngrams(a, config.char_ngrams) if g in set(char_ngrams(b, config.char_ngrams))] if config.char_ngrams else []
    if shared:
        return "shared n-grams " + " ".join(shared[:8])
    return "used in the same units"


def calibrate(sim: float, floor: float) -> float:
    """One field's score from its raw similarity: max(0, (s − z) / (1 − z)) with s = 2·sim − 1."""
    return max(0.0, (2.0 * sim - 1.0 - floor) / (1.0 - floor))


def _role_table(roles: list[Role], seed: str) -> np.ndarray:
    return np.array([hv(seed, f"role:{r.value}") for r in roles], dtype=np.uint64).reshape(-1, WORDS)


def _acts_table(act_sets: list[tuple[Act, ...]], seed: str) -> np.ndarray:
    rows = [bundle(np.array([hv(seed, f"act:{a.value}") for a in acts])) for acts in act_sets]
    return np.array(rows, dtype=np.uint64).reshape(-1, WORDS)


def field_scores(distances: np.ndarray, floor: float) -> np.ndarray:
    """`calibrate` over arrays: s = 1 − d / 2048, then max(0, (s − z) / (1 − z))."""
    return np.maximum(0.0, (1.0 - distances / (DIMENSIONS / 2) - floor) / (1.0 - floor))
