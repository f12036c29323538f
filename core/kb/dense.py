"""The optional dense lane: cosine similarity of unit and question embeddings (core/infra/embeddings.py).

Built per permitted view like every index, so only units the caller may see are embedded and
ranked. Unit text = topic + newline + claim (or procedure), cut at `maxChars`. Scores are cosines
clipped at 0. Unit vectors are kept in the index store per KB file (core/store/vectors.py), keyed
by the model, that text and its cut-off; the dimension is the one the endpoint answers, and rows
of another dimension are embedded again. Units no stored file holds are kept in memory.
Without an endpoint, or when it fails (down, slow, garbage), `DenseLane.pool` raises
EmbeddingError with the reason, and the kb plugin ranks with its other lanes and says so.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from core.infra.config import DenseConfig
from core.infra.embeddings import EmbeddingClient, EmbeddingConfig, EmbeddingError, remove_legacy_cache
from core.retrieval.lanes import top_scores
from core.units import KnowledgeUnit

if TYPE_CHECKING:
    from core.store.stored import StoredKb
    from core.store.vectors import DenseVectors

# What text a unit's vector embeds; part of the store's key, so changing it re-embeds.
TEXT_FORMAT = "topic, newline, claim or procedure"


def unit_text(unit: KnowledgeUnit) -> str:
    return f"{unit.topic}\n{unit.body}"


class DenseIndex:
    def __init__(self, unit_ids: list[str], vectors: DenseVectors):
        self.unit_ids = unit_ids
        self.vectors = vectors
        self.matrix = vectors.matrix
        # Set when the endpoint's vectors no longer fit these: the view's indexes build anew.
        self.stale = False

    def scores(self, query: np.ndarray) -> np.ndarray:
        if not len(self.unit_ids):
            return np.zeros(0)
        return np.maximum(0.0, self.matrix @ query).astype(np.float64)


class DenseLane:
    """The endpoint client one session shares across its views; unit vectors in the store."""

    def __init__(self, config: EmbeddingConfig, lane: DenseConfig):
        self.client = EmbeddingClient(config)
        self.lane = lane
        self._memory: dict[bytes, np.ndarray] = {}
        self._lock = threading.Lock()
        if self.configured:
            remove_legacy_cache(config)

    @property
    def configured(self) -> bool:
        return self.client.configured

    @property
    def store_options(self) -> dict[str, object]:
        config = self.client.config
        return {"model": config.model, "text": TEXT_FORMAT, "maxChars": config.max_chars}

    def build(self, units: Sequence[KnowledgeUnit], stored: StoredKb | None = None) -> DenseIndex:
        """Embed the units that have no vector yet (in batches), then the index; raises EmbeddingError."""
        if not self.configured:
            raise EmbeddingError("no embeddings endpoint configured (config/embeddings.json baseUrl)")
        from core.store.vectors import dense_vectors  # the vector store, only once an endpoint is configured

        vectors = dense_vectors(stored, units, self.store_options, self._embed, self._loose)
        return DenseIndex([u.id for u in units], vectors)

    def pool(self, index: DenseIndex, question: str) -> dict[str, float]:
        """The lane's best `lanePool` units at or above `laneMinScore`; raises EmbeddingError."""
        query = self.client.embed([question])[0]
        if len(index.unit_ids) and query.shape != index.matrix.shape[1:]:
            index.vectors.forget()
            index.stale = True
            raise EmbeddingError(
                f"the endpoint now answers {query.shape[0]} dimensions, the units' vectors have "
                f"{index.matrix.shape[1]}: they are dropped and embedded again on the next query"
            )
        return top_scores(index.unit_ids, index.scores(query), self.lane.lane_min_score, self.lane.lane_pool)

    def _embed(self, units: Sequence[KnowledgeUnit]) -> np.ndarray:
        return self.client.embed([unit_text(u) for u in units])

    def _loose(self, units: Sequence[KnowledgeUnit]) -> np.ndarray:
        """Vectors of units no stored KB file holds, kept in memory by model and text."""
        keys = [
            hashlib.blake2b(f"{self.client.config.model}\0{unit_text(u)}".encode(), digest_size=16).digest()
            for u in units
        ]
        with self._lock:
            missing = [i for i, k in enumerate(keys) if k not in self._memory]
        if missing:
            fresh = self._embed([units[i] for i in missing])
            with self._lock:
                self._memory.update({keys[i]: row for i, row in zip(missing, fresh, strict=True)})
        with self._lock:
            rows = [self._memory.get(k) for k in keys]
        present = [r for r in rows if r is not None]
        if len(present) < len(rows) or len({r.shape for r in present}) > 1:
            with self._lock:
                self._memory.clear()  # the model answered another dimension meanwhile
            raise EmbeddingError(
                "embeddings of different lengths: the endpoint's model changed; embedded again next query"
            )
        return np.array(present, dtype=np.float32).reshape(len(units), -1)
