"""4096-bit hyperdimensional (VSA) retrieval lane (seed 000, DESIGN §7): encoding units and
questions; vector algebra in hdc_vectors, the index that scores a view in hdc_index. What this
module and the encoder modules hold keys the stored vector sets (`encoding_options`), so scoring
lives apart: changing how a view is scored does not re-encode every stored vector.

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
from importlib.util import find_spec
from pathlib import Path

import numpy as np

from core.infra.config import HdcConfig
from core.retrieval.hdc.context import ContextModel
from core.retrieval.hdc.scan import hamming
from core.retrieval.hdc.vectors import (
    DIMENSIONS,
    WORDS,
    TokenVectors,
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
from core.text.tokenizer import tokenize
from core.units import ACT_PREFERRED_ROLES, Act, KnowledgeUnit

__all__ = [
    "DIMENSIONS",
    "FIELDS",
    "WORDS",
    "HdcQuery",
    "bind",
    "bundle",
    "char_ngrams",
    "encode_ngrams",
    "encode_ngrams_batch",
    "encode_query",
    "field_scores",
    "hamming",
    "hv",
    "hv_table",
    "calibrate",
    "encode_topics_and_windows",
    "encode_units",
    "encoding_options",
    "learn_model",
    "noise_floor",
    "permute",
    "similarity",
    "token_table",
    "token_vectors",
    "unit_windows",
    "window_sentences",
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
    from core.cnl.plain_sentences import split_sentences  # the reader's sentence rules, loaded on first use

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
        "maxUnitTokens": config.max_unit_tokens,
        "contextModel": model.digest if model is not None else "",
        "encoder": _encoder_digest(),
    }


@lru_cache(maxsize=1)
def _encoder_digest() -> str:
    hasher = hashlib.sha256()
    # by module name, so the digest follows the modules wherever they live
    for module in (__name__, "core.retrieval.hdc.vectors", "core.retrieval.hdc.context", "core.retrieval.hdc.tokens"):
        spec = find_spec(module)
        if spec is None or spec.origin is None:
            raise ImportError(f"{module} has no source file to digest")
        path = Path(spec.origin)
        hasher.update(path.name.encode() + b"\0" + path.read_bytes())
    return hasher.hexdigest()[:16]


def encode_units(
    units: Sequence[KnowledgeUnit], config: HdcConfig, model: ContextModel | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Topic vectors [N, 64], every unit's claim windows stacked [W, 64], windows per unit [N]."""
    topic, windows = encode_topics_and_windows(units, config, token_vectors(config, model))
    return topic, stack_windows(windows), np.array([len(w) for w in windows], dtype=np.int64)


def stack_windows(windows: Sequence[np.ndarray]) -> np.ndarray:
    return np.concatenate(windows) if len(windows) else np.zeros((0, WORDS), dtype=np.uint64)


def learn_model(units: Sequence[KnowledgeUnit], config: HdcConfig) -> ContextModel | None:
    """The view's learned token vectors when `contextVectors` asks for them, else None."""
    return ContextModel.learn(units, config) if config.context_vectors else None


def encode_topics_and_windows(
    units: Sequence[KnowledgeUnit], config: HdcConfig, vectors_of: TokenVectors | None
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Topic vectors and per-unit claim-window vectors; read-only, as the cache shares them."""
    windows = [unit_windows(u.body, config.claim_window) for u in units]
    texts = [u.topic for u in units] + [w for ws in windows for w in ws]
    vectors = encode_ngrams_batch([tokenize(t) for t in texts], config.seed, vectors_of, config.max_unit_tokens)
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
    """Query tokens (already through core.text.tokenizer) for topic and claim, preferred roles, the act.

    With learned token vectors, pass the index's model (or use `HdcIndex.query`)."""
    roles = np.array([hv(config.seed, f"role:{r.value}") for r in ACT_PREFERRED_ROLES[act]])
    return HdcQuery(
        text=encode_ngrams(tokens, config.seed, token_vectors(config, model)) if tokens else None,
        role=bundle(roles),
        act=hv(config.seed, f"act:{act.value}"),
        tokens=tuple(tokens),
    )


def calibrate(sim: float, floor: float) -> float:
    """One field's score from its raw similarity: max(0, (s − z) / (1 − z)) with s = 2·sim − 1."""
    return max(0.0, (2.0 * sim - 1.0 - floor) / (1.0 - floor))


def field_scores(distances: np.ndarray, floor: float) -> np.ndarray:
    """`calibrate` over arrays: s = 1 − d / 2048, then max(0, (s − z) / (1 − z))."""
    return np.maximum(0.0, (1.0 - distances / (DIMENSIONS / 2) - floor) / (1.0 - floor))
