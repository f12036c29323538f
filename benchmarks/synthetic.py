"""A deterministic synthetic KB: Zipfian pseudo-word vocabulary, 20–60 tokens per unit (DESIGN §14)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property

import numpy as np

from core.text.tokenizer import STOPWORDS
from core.units import KnowledgeUnit, Role

VOCABULARY = 50_000
ZIPF_EXPONENT = 1.0
_CONSONANTS = "bdfgklmnprstvz"
# No "e" or "y": Porter would strip or rewrite them, merging pseudo-words into one stem.
_VOWELS = "aiou"


def pseudo_words(count: int, rng: np.random.Generator) -> list[str]:
    syllables = [c + v for c in _CONSONANTS for v in _VOWELS]
    words: dict[str, None] = {}
    while len(words) < count:
        parts = rng.integers(0, len(syllables), size=(count, 4))
        sizes = rng.integers(2, 5, size=count)
        # Python ints, not numpy scalars: indexing with numpy's was most of the time.
        for row, size in zip(parts.tolist(), sizes.tolist(), strict=True):
            word = "".join([syllables[i] for i in row[:size]])
            if word not in STOPWORDS:
                words[word] = None
    return list(words)[:count]


@cache
def _vocabulary(seed: int) -> tuple[str, ...]:
    """The words of every KB of this seed, made once a process: a benchmark run makes a dozen KBs."""
    return tuple(pseudo_words(VOCABULARY, np.random.default_rng([seed, 0])))


@dataclass
class SyntheticKb:
    """Units and queries for one size; everything derives from `seed`, so runs are comparable.

    Each part draws from its own generator, so the order in which parts are built does not matter.
    """

    n: int
    seed: int = 7
    query_count: int = 200

    def rng(self, purpose: int) -> np.random.Generator:
        return np.random.default_rng([self.seed, purpose])

    @property
    def words(self) -> tuple[str, ...]:
        return _vocabulary(self.seed)

    @cached_property
    def probabilities(self) -> np.ndarray:
        weights = 1.0 / np.arange(1, VOCABULARY + 1) ** ZIPF_EXPONENT
        return weights / weights.sum()

    def draw(self, count: int, rng: np.random.Generator) -> list[str]:
        ranks = rng.choice(VOCABULARY, size=count, p=self.probabilities)
        words = self.words
        return [words[r] for r in ranks.tolist()]

    @cached_property
    def units(self) -> list[KnowledgeUnit]:
        rng = self.rng(1)
        totals = rng.integers(20, 61, size=self.n)
        topics = rng.integers(3, 9, size=self.n)
        tokens = self.draw(int(totals.sum()), rng)
        roles = list(Role)
        units, at = [], 0
        # Trusted generated data (shape rules hold by construction): skipping validation saves seconds.
        for i, (total, topic) in enumerate(zip(totals, topics, strict=True)):
            words = tokens[at : at + total]
            at += total
            role = roles[i % len(roles)]
            body = " ".join(words[topic:])
            units.append(
                KnowledgeUnit.model_construct(
                    id=f"syn::chunk-{i // 100:03d}::unit-{i % 100:03d}",
                    source_id="syn",
                    chunk_id=f"chunk-{i // 100:03d}",
                    role=role,
                    topic=" ".join(words[:topic]),
                    **({"procedure": body} if role is Role.PROCEDURE else {"claim": body}),
                )
            )
        return units

    @cached_property
    def queries(self) -> list[str]:
        """3–8 words drawn from the same Zipf law, so frequent words make queries touch many units."""
        rng = self.rng(2)
        lengths = rng.integers(3, 9, size=self.query_count)
        return [" ".join(self.draw(int(k), rng)) for k in lengths]
