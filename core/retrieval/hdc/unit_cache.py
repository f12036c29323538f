"""The HDC unit vectors a session keeps between rebuilds, per unit id.

Apart from the encoder (core/retrieval/hdc/encoding.py), which it imports on its first encoding:
every opened KB makes one, and a question that never reaches the HDC lane (every warm `mrptui ask`
on the default profile) need not import the lane (issue 41).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from core.infra.config import HdcConfig
from core.units import KnowledgeUnit

if TYPE_CHECKING:
    from core.retrieval.hdc.context import ContextModel


def _unit_digest(unit: KnowledgeUnit, config: HdcConfig, model: ContextModel | None) -> bytes:
    parts = (
        config.seed,
        config.claim_window,
        config.char_ngrams,
        config.max_unit_tokens,
        model.digest if model else "",
    )
    options = "\x00".join(map(str, parts))
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
        from core.retrieval.hdc.encoding import WORDS, encode_topics_and_windows, token_vectors

        digests = [_unit_digest(u, config, model) for u in units]
        stale = [i for i, (u, d) in enumerate(zip(units, digests, strict=True)) if self._digest(u.id) != d]
        topic, windows = encode_topics_and_windows([units[i] for i in stale], config, token_vectors(config, model))
        for j, i in enumerate(stale):
            self._entries[units[i].id] = (digests[i], topic[j], windows[j])
        self.encoded += len(stale)
        entries = [self._entries[u.id] for u in units]
        return np.array([e[1] for e in entries], dtype=np.uint64).reshape(-1, WORDS), [e[2] for e in entries]

    def _digest(self, unit_id: str) -> bytes | None:
        entry = self._entries.get(unit_id)
        return entry[0] if entry else None
