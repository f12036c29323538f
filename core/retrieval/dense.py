"""The optional dense lane: cosine similarity of unit and question embeddings (core/embeddings.py).

Built per permitted view like every index, so only units the caller may see are embedded and
ranked. Unit text = topic + newline + claim (or procedure). Scores are cosines clipped at 0.
Without an endpoint, or when it fails (down, slow, garbage), `DenseLane.pool` raises
EmbeddingError with the reason, and the kb plugin ranks with its other lanes and says so.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.config import DenseConfig
from core.embeddings import EmbeddingClient, EmbeddingConfig, EmbeddingError, VectorCache
from core.retrieval.lanes import top_scores
from core.units import KnowledgeUnit


def unit_text(unit: KnowledgeUnit) -> str:
    return f"{unit.topic}\n{unit.body}"


class DenseIndex:
    def __init__(self, unit_ids: list[str], matrix: np.ndarray):
        self.unit_ids = unit_ids
        self.matrix = matrix

    def scores(self, query: np.ndarray) -> np.ndarray:
        if not len(self.unit_ids):
            return np.zeros(0)
        return np.maximum(0.0, self.matrix @ query).astype(np.float64)


class DenseLane:
    """The endpoint client and the vector cache one session shares across its views."""

    def __init__(self, config: EmbeddingConfig, lane: DenseConfig):
        self.client = EmbeddingClient(config)
        self.lane = lane
        self._cache: VectorCache | None = None

    @property
    def configured(self) -> bool:
        return self.client.configured

    @property
    def cache(self) -> VectorCache:
        if self._cache is None:
            self._cache = VectorCache(self.client.config.cache_folder(), self.client.config.model)
        return self._cache

    def build(self, units: Sequence[KnowledgeUnit]) -> DenseIndex:
        """Embed the units not in the cache (in batches), then the index; raises EmbeddingError."""
        if not self.configured:
            raise EmbeddingError("no embeddings endpoint configured (config/embeddings.json baseUrl)")
        texts = [unit_text(u) for u in units]
        keys = [self.cache.key(t) for t in texts]
        missing = list(dict.fromkeys(k for k in keys if self.cache.get(k) is None))
        if missing:
            text_of = dict(zip(keys, texts, strict=True))
            vectors = self.client.embed([text_of[k] for k in missing])
            self.cache.put(dict(zip(missing, vectors, strict=True)))
        rows = [self.cache.get(k) for k in keys]
        if rows and len({r.shape for r in rows}) != 1:
            raise EmbeddingError("cached vectors differ in length: the endpoint's model changed; clear the dense cache")
        matrix = np.array(rows, dtype=np.float32).reshape(len(rows), -1)
        return DenseIndex([u.id for u in units], matrix)

    def pool(self, index: DenseIndex, question: str) -> dict[str, float]:
        """The lane's best `lanePool` units at or above `laneMinScore`; raises EmbeddingError."""
        query = self.client.embed([question])[0]
        if index.matrix.shape[1:] and query.shape != index.matrix.shape[1:]:
            raise EmbeddingError("the question's vector and the units' vectors differ in length")
        return top_scores(index.unit_ids, index.scores(query), self.lane.lane_min_score, self.lane.lane_pool)
