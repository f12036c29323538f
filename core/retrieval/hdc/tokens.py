"""HDC vectors of a KB file from the tokens its segment already holds (core/store/segment.py), so a
cold build does not tokenise the file a second time; bit-identical to `encode_units` on the text."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.infra.config import HdcConfig
from core.retrieval.bm25.fields import FIELDS as TOKEN_FIELDS
from core.retrieval.hdc.context import ContextModel
from core.retrieval.hdc.encoding import token_table, window_sentences
from core.retrieval.hdc.vectors import cut_lengths, encode_id_batch
from core.text.tokenizer import tokenize
from core.units import KnowledgeUnit

# Where topic and body sit among a segment's token fields (BM25's).
_TOPIC, _CLAIM, _PROCEDURE = (TOKEN_FIELDS.index(name) for name in ("topic", "claim", "procedure"))


def encode_tokenised(
    units: Sequence[KnowledgeUnit],
    words: Sequence[str],
    terms: np.ndarray,
    lengths: np.ndarray,
    config: HdcConfig,
    model: ContextModel | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`encode_units` (bit for bit) from the tokens a segment already holds (core/store/segment.py):
    `terms` are ids into `words`, unit after unit and field after field in BM25's field order,
    `lengths[i, f]` unit i's count in field f. Topic and a one-window body take their field's ids
    as they are; a body of several claim windows is cut where each sentence's tokens start
    (counted per sentence, as the segment keeps tokens per field). Each distinct token's vector is
    computed once for the whole batch, not per occurrence."""
    n = len(units)
    lengths = np.asarray(lengths, dtype=np.int64).reshape(n, len(TOKEN_FIELDS))
    field_start = (np.cumsum(lengths.ravel()) - lengths.ravel()).reshape(lengths.shape)
    body_field = np.fromiter((_CLAIM if u.claim is not None else _PROCEDURE for u in units), dtype=np.int64, count=n)
    body_start, body_length = field_start[np.arange(n), body_field], lengths[np.arange(n), body_field]
    windows = _TokenWindows(words, len(terms))
    for row, unit in enumerate(units):
        windows.add(unit.body, config.claim_window, int(body_start[row]), int(body_length[row]))
    starts = np.concatenate([field_start[:, _TOPIC], np.asarray(windows.starts, dtype=np.int64)])
    sizes = np.concatenate([lengths[:, _TOPIC], np.asarray(windows.sizes, dtype=np.int64)])
    # Tokens past the cap get no vector either (`cut_lengths`).
    sizes = cut_lengths(sizes, config.max_unit_tokens)
    source = np.concatenate([np.asarray(terms, dtype=np.int64), np.asarray(windows.extra_ids, dtype=np.int64)])
    flat = source[np.repeat(starts - (np.cumsum(sizes) - sizes), sizes) + np.arange(int(sizes.sum()))]
    vocabulary = windows.vocabulary()
    # The tokens used (a file's words also count its conditions and notes), renumbered densely.
    used = np.flatnonzero(np.bincount(flat, minlength=len(vocabulary)))
    dense = np.zeros(len(vocabulary), dtype=np.int64)
    dense[used] = np.arange(len(used))
    tokens = [vocabulary[i] for i in used.tolist()]
    if model is not None:
        table = model(tokens)
    else:
        table = token_table(config.seed, tokens, config.char_ngrams)
    vectors = encode_id_batch(dense[flat], sizes, table)
    return vectors[:n], vectors[n:], np.asarray(windows.counts, dtype=np.int64)


class _TokenWindows:
    """Each unit's claim windows as (start, size) runs of token ids: runs of the segment's
    `terms`, or (where a body's sentences do not add up to its tokens: a numbered list's markers
    are cut from its sentences) ids of the window's own tokens appended after them."""

    def __init__(self, words: Sequence[str], terms: int):
        self._words = words
        self._terms = terms
        self._ids: dict[str, int] | None = None
        self._new: list[str] = []
        self.starts: list[int] = []
        self.sizes: list[int] = []
        self.counts: list[int] = []
        self.extra_ids: list[int] = []

    def add(self, body: str, sentences: int, start: int, size: int) -> None:
        parts = window_sentences(body, sentences)
        if parts is None:
            self._run(start, size)
            self.counts.append(1)
            return
        cuts = np.cumsum([0, *map(len, map(tokenize, parts))]).tolist()
        aligned = cuts[-1] == size  # the sentences hold exactly the body's tokens, in order
        for first in range(len(parts) - sentences + 1):
            if aligned:
                self._run(start + cuts[first], cuts[first + sentences] - cuts[first])
            else:
                self._own(tokenize(" ".join(parts[first : first + sentences])))
        self.counts.append(len(parts) - sentences + 1)

    def _run(self, start: int, size: int) -> None:
        self.starts.append(start)
        self.sizes.append(size)

    def _own(self, tokens: Sequence[str]) -> None:
        if self._ids is None:
            self._ids = {word: i for i, word in enumerate(self._words)}
        self._run(self._terms + len(self.extra_ids), len(tokens))
        for token in tokens:
            if token not in self._ids:
                self._ids[token] = len(self._ids)
                self._new.append(token)
            self.extra_ids.append(self._ids[token])

    def vocabulary(self) -> Sequence[str]:
        words = self._words if isinstance(self._words, tuple) else tuple(self._words)
        return words + tuple(self._new) if self._new else words
