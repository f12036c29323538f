"""The token ids of a KB's units, joined from its segments into one vocabulary.

BM25 for a permitted view then gathers the rows of the view's units (a row mask applied before
any ranking) instead of tokenising them again. Statistics (N, df, avgdl) are computed by the
index over exactly the gathered rows, so scores equal those of a from-scratch build.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import cached_property
from itertools import chain, count

import numpy as np

from core.retrieval.bm25.fields import FIELDS, field_tokens
from core.store.codec import ROLE
from core.store.segment import Segment, unit_digest
from core.units import KnowledgeUnit

# (vocabulary, term id of every token, lengths [F, N]): what `Bm25Index.build` tokenises itself.
Tokens = tuple[dict[str, int], np.ndarray, np.ndarray]


class TokenTable:
    """Token ids of the KB's segments by row: row r of the KB's `UnitTable` is row r here (both
    number the segments' units in load order). A negative row -1-k stands for `extra[k]`, a
    current-turn unit no segment holds, which is tokenised."""

    def __init__(self, segments: Sequence[Segment]):
        self._segments = list(segments)
        self._first_row = np.cumsum([0, *(len(segment.units) for segment in self._segments)])
        self._joined: tuple[list[str], np.ndarray] | None = None
        self._grouped: tuple[np.ndarray, tuple] | None = None
        self._lock = threading.Lock()

    # Joined across segments on first use: a reload builds a table per KB, and scoring by
    # per-file parts needs only `by_segment` (at 1M units each join is tens of milliseconds).
    @cached_property
    def _lengths(self) -> np.ndarray:
        if not self._segments:
            return np.zeros((0, len(FIELDS)), np.int32)
        return np.concatenate([np.asarray(s.lengths) for s in self._segments])

    @cached_property
    def _digests(self) -> np.ndarray:
        if not self._segments:
            return np.zeros((0, 16), np.uint8)
        return np.concatenate([np.asarray(s.digests) for s in self._segments])

    @cached_property
    def _starts(self) -> np.ndarray:
        totals = self._lengths.sum(axis=1, dtype=np.int64)
        return np.cumsum(totals) - totals

    @cached_property
    def _ids(self) -> list[str]:
        return list(chain.from_iterable(segment.columns.ids for segment in self._segments))

    @cached_property
    def _roles(self) -> np.ndarray:
        if not self._segments:
            return np.zeros(0, np.int32)
        return np.concatenate([s.cols[:, ROLE] for s in self._segments])

    def _vocabulary(self) -> tuple[list[str], np.ndarray]:
        """One vocabulary over all segments and every token's id in it; joined on first use
        (about a second at 100k units), since a merged index read from the cache needs neither."""
        with self._lock:
            if self._joined is None:
                # In first-use order; dict.fromkeys and map keep the per-word work in C.
                words = dict.fromkeys(chain.from_iterable(segment.words for segment in self._segments))
                vocab = dict(zip(words, count()))
                terms = [
                    np.fromiter(map(vocab.__getitem__, s.words), dtype=np.int32, count=len(s.words))[s.terms]
                    for s in self._segments
                ]
                self._joined = (list(vocab), np.concatenate(terms) if terms else np.zeros(0, np.int32))
            return self._joined

    def digests(self, rows: np.ndarray, extra: Sequence[KnowledgeUnit]) -> bytes:
        """The `unit_digest` of each row's unit, read from its segment or computed for extras."""
        stored = self._digests[np.maximum(rows, 0)]
        for position in np.flatnonzero(rows < 0).tolist():
            stored[position] = np.frombuffer(unit_digest(extra[-1 - int(rows[position])]), dtype=np.uint8)
        return stored.tobytes()

    def columns(self, rows: np.ndarray) -> tuple[list[str], np.ndarray]:
        """Ids and role codes of the given (stored) rows: what BM25 needs besides tokens."""
        ids = self._ids
        return [ids[row] for row in rows.tolist()], self._roles[rows]

    def by_segment(self, rows: np.ndarray) -> tuple[list[tuple[int, np.ndarray, np.ndarray]], np.ndarray]:
        """Positions in `rows` grouped by segment: (segment number, positions, rows within the
        segment), and the positions of rows no segment holds (current-turn units)."""
        grouped = self._grouped
        if grouped is not None and grouped[0] is rows:  # the view's parts, then its merged-index key
            return grouped[1]
        found = self._by_segment(rows)
        self._grouped = (rows, found)
        return found

    def _by_segment(self, rows: np.ndarray) -> tuple[list[tuple[int, np.ndarray, np.ndarray]], np.ndarray]:
        loose = np.flatnonzero(rows < 0)
        held = np.flatnonzero(rows >= 0)
        segment_of = np.searchsorted(self._first_row, rows[held], side="right") - 1
        if len(self._first_row) <= np.iinfo(np.int16).max:
            segment_of = segment_of.astype(np.int16)  # a stable sort of int16 is a radix sort: O(N)
        order = np.argsort(segment_of, kind="stable")
        held, segment_of = held[order], segment_of[order]
        bounds = np.flatnonzero(np.diff(segment_of)) + 1
        groups = []
        for positions, numbers in zip(np.split(held, bounds), np.split(segment_of, bounds), strict=True):
            if len(positions):
                number = int(numbers[0])
                groups.append((number, positions, rows[positions] - self._first_row[number]))
        return groups, loose

    def tokens(self, rows: np.ndarray, extra: Sequence[KnowledgeUnit]) -> Tokens:
        """Vocabulary (only terms the given rows contain), term ids and lengths, as BM25 wants them."""
        missing = np.flatnonzero(rows < 0)
        words, all_terms = self._vocabulary()
        term_of, counts, per_unit = _gather(all_terms, self._lengths, self._starts, rows)
        if len(missing):
            units = [extra[-1 - int(rows[position])] for position in missing.tolist()]
            term_of, counts, words = _with_tokenised(units, missing, per_unit, term_of, counts, words)
        return _compact(words, term_of, counts)


def _with_tokenised(units, missing, per_unit, term_of, counts, words):
    """Splice in the tokens of units that have no stored row, growing a private vocabulary."""
    words = list(words)
    vocab = {word: i for i, word in enumerate(words)}
    pieces, cursor = [], 0
    ends = np.cumsum(per_unit)
    for unit, position in zip(units, missing.tolist()):
        pieces.append(term_of[cursor : ends[position]])
        cursor = int(ends[position])
        fields = field_tokens(unit)
        counts[position] = [len(tokens) for tokens in fields]
        ids = [vocab.setdefault(token, len(vocab)) for tokens in fields for token in tokens]
        pieces.append(np.array(ids, dtype=np.int32))
    pieces.append(term_of[cursor:])
    return np.concatenate(pieces).astype(np.int32), counts, list(vocab)


def segment_tokens(segment: Segment, rows: np.ndarray) -> Tokens:
    """The tokens of some of one segment's units (by row), in the segment's own vocabulary: a
    per-file BM25 part needs no vocabulary joined across the KB."""
    lengths = np.asarray(segment.lengths)
    totals = lengths.sum(axis=1, dtype=np.int64)
    term_of, counts, _ = _gather(np.asarray(segment.terms), lengths, np.cumsum(totals) - totals, rows)
    return _compact(list(segment.words), term_of, counts)


def segment_columns(segment: Segment, rows: np.ndarray) -> tuple[list[str], np.ndarray]:
    """Ids and role codes of some of one segment's units (by row)."""
    ids = segment.columns.ids
    return [ids[row] for row in rows.tolist()], np.asarray(segment.cols[rows, ROLE])


def _gather(terms: np.ndarray, lengths: np.ndarray, starts: np.ndarray, rows: np.ndarray):
    """Term ids and field lengths of the given rows (a row of -1 gets none), in row order."""
    counts = lengths[np.maximum(rows, 0)]
    counts[rows < 0] = 0
    per_unit = counts.sum(axis=1)
    offsets = np.repeat(starts[np.maximum(rows, 0)] - (np.cumsum(per_unit) - per_unit), per_unit)
    term_of = terms[offsets + np.arange(len(offsets))] if len(offsets) else np.zeros(0, np.int32)
    return term_of, counts, per_unit


def _compact(words: list[str], term_of: np.ndarray, counts: np.ndarray) -> Tokens:
    """Renumber to the terms present: a term only restricted units use must not exist in the index."""
    present = np.zeros(len(words), dtype=bool)
    present[term_of] = True
    kept = np.flatnonzero(present)
    new_id = np.cumsum(present, dtype=np.int64) - 1
    vocab = dict(zip(map(words.__getitem__, kept.tolist()), count()))
    return vocab, new_id[term_of].astype(np.int32), np.ascontiguousarray(counts.T, dtype=np.int32)
