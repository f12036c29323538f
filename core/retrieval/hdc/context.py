"""Token vectors learned from the KB by random indexing (Kanerva, Kristofersson & Holst 2000).

Each unit gets a sparse random index vector: `contextVectors` = k of the 4096 positions, each +1
or −1, drawn from a hash of the seed and the unit id. A token's context count vector is the sum
of the index vectors of the units it occurs in; its token vector takes the sign of that sum where
the sum is not 0 and the token's own random bit (or character n-gram bit) elsewhere. Tokens that
occur in the same units therefore share many bits (distributional similarity: "laptop" and
"notebook" written in the same units come out alike), while a rare token keeps most of its own
identity, so exact matches still score highest. Tokens in only one unit learn nothing and keep
their own vector.

The model depends on every unit of the view, so it is learned per view and its digest is part of
each unit's cache key. Learning is bounded: one pass over each unit's distinct tokens, in blocks
of `_BLOCK_TOKENS` tokens so the count matrix stays at a few tens of MB whatever the vocabulary.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from core.infra.config import HdcConfig
from core.retrieval.hdc.vectors import DIMENSIONS, WORDS, token_table
from core.text.tokenizer import tokenize
from core.units import KnowledgeUnit

_BLOCK_TOKENS = 1024


class ContextModel:
    """Learned token vectors for the tokens seen in at least two units; others are plain."""

    def __init__(self, vocab: dict[str, int], table: np.ndarray, config: HdcConfig, digest: str):
        self._vocab = vocab
        self._table = table
        self._config = config
        self.digest = digest

    @classmethod
    def learn(cls, units: Sequence[KnowledgeUnit], config: HdcConfig) -> ContextModel:
        k = config.context_vectors
        unit_tokens = [sorted(set(tokenize(u.topic)) | set(tokenize(u.body))) for u in units]
        df: dict[str, int] = {}
        for tokens in unit_tokens:
            for t in tokens:
                df[t] = df.get(t, 0) + 1
        vocab = {t: i for i, t in enumerate(sorted(t for t, n in df.items() if n >= 2))}
        positions, signs = _index_vectors([u.id for u in units], config.seed, k)
        pairs = [(vocab[t], d) for d, tokens in enumerate(unit_tokens) for t in tokens if t in vocab]
        term_of = np.array([p[0] for p in pairs], dtype=np.int64)
        doc_of = np.array([p[1] for p in pairs], dtype=np.int64)
        order = np.argsort(term_of, kind="stable")
        term_of, doc_of = term_of[order], doc_of[order]
        own = token_table(config.seed, list(vocab), config.char_ngrams)
        table = np.empty((len(vocab), WORDS), dtype=np.uint64)
        for start in range(0, len(vocab), _BLOCK_TOKENS):
            stop = min(start + _BLOCK_TOKENS, len(vocab))
            lo, hi = np.searchsorted(term_of, [start, stop])
            local = (term_of[lo:hi] - start)[:, None] * DIMENSIONS + positions[doc_of[lo:hi]]
            counts = np.bincount(
                local.ravel(), weights=signs[doc_of[lo:hi]].ravel(), minlength=(stop - start) * DIMENSIONS
            )
            counts = counts.reshape(stop - start, DIMENSIONS)
            own_bits = np.unpackbits(own[start:stop].view(np.uint8), axis=1, bitorder="little").astype(bool)
            bits = np.where(counts != 0, counts > 0, own_bits)
            table[start:stop] = np.packbits(bits, axis=1, bitorder="little").view(np.uint64)
        table.flags.writeable = False
        digest = hashlib.blake2b(
            "\x00".join(u.id + "\x01" + u.topic + "\x01" + u.body for u in units).encode(), digest_size=8
        )
        return cls(vocab, table, config, digest.hexdigest())

    def __call__(self, tokens: Sequence[str]) -> np.ndarray:
        """Token vectors for `tokens`: learned where known, the plain token vector otherwise."""
        out = token_table(self._config.seed, tokens, self._config.char_ngrams)
        known = [(i, self._vocab[t]) for i, t in enumerate(tokens) if t in self._vocab]
        if known:
            rows, ids = zip(*known, strict=True)
            out[list(rows)] = self._table[list(ids)]
        return out

    def __len__(self) -> int:
        return len(self._vocab)


def _index_vectors(unit_ids: Sequence[str], seed: str, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per unit, k distinct positions and a ±1 sign each, from a hash of seed and id."""
    positions = np.empty((len(unit_ids), k), dtype=np.int64)
    signs = np.empty((len(unit_ids), k), dtype=np.float64)
    for row, uid in enumerate(unit_ids):
        rng = np.random.default_rng(
            np.frombuffer(hashlib.blake2b(f"{seed}\x00ri\x00{uid}".encode(), digest_size=16).digest(), dtype=np.uint32)
        )
        positions[row] = rng.choice(DIMENSIONS, size=k, replace=False)
        signs[row] = rng.choice((-1.0, 1.0), size=k)
    return positions, signs
