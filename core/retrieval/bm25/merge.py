"""Merging per-file BM25 parts into one index a block of terms at a time, for a writer that
stores each block as it comes (issue 41).

Laid out in memory at once, as `merge` does, the merged index's keys, tf, CSR columns and data
(~0.9 GB at 1M units) existed whole before anything was written: a cold open's peak. Only
those four arrays grow with the postings, and everything else is known before the first of them:
a merged term's df is the sum of its parts' df (no unit is in two parts), hence idf and the CSR
row offsets; lengths, avgdl and norms are the parts' lengths. So `MergePlan` holds the small
arrays, and `blocks` gives the four large ones term range by term range, each block gathered
from the parts' runs of its terms (a part's keys are sorted by its own term ids, so a range of
merged ids is scattered runs of it). Any block budget gives the same arrays, hence the same bytes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from core.infra.config import Bm25Config
from core.retrieval.bm25.fields import FIELDS
from core.retrieval.bm25.formula import average_lengths, idf, length_norm
from core.retrieval.bm25.index import Bm25Index
from core.retrieval.bm25.layout import keys_per_term, pair_block, place_parts, renumber

# The merge's memory budget: postings (keys) per block. A block's temporaries are a few arrays of
# this many 8-byte values (~0.1 GB at this size); a block never splits a term, so a term with more
# postings than this is a block of its own, as large as that term.
BLOCK_KEYS = 1 << 19
_WHOLE = 1 << 62

# The arrays that grow with the postings, written block by block, and their types.
STREAMED: dict[str, np.dtype] = {
    "keys": np.dtype(np.int64),
    "tf": np.dtype(np.int32),
    "indices": np.dtype(np.int32),
    "data": np.dtype(np.float64),
}


@dataclass(frozen=True)
class _Part:
    """A part's runs by merged term id: `order` lists its terms (its own ids) by merged id."""

    index: Bm25Index
    rows: np.ndarray  # the merged index's row of each of its units
    term_of: np.ndarray  # merged id of each of its terms
    order: np.ndarray
    merged: np.ndarray  # term_of[order], ascending
    per_term: np.ndarray  # keys of each of its terms
    starts: np.ndarray  # where each of its terms' keys start


@dataclass(frozen=True)
class MergePlan:
    """The merged index's vocabulary and small arrays, and its large arrays' lengths; `blocks`
    gives those block by block."""

    unit_ids: list[str]
    words: list[str]
    arrays: dict[str, np.ndarray]  # roles, df, idf, indptr, lengths, avgdl, norms
    lengths: dict[str, int]  # of each array in `STREAMED`
    bounds: np.ndarray  # merged term ids where blocks start (and the last block's end)
    config: Bm25Config
    _parts: list[_Part]

    def blocks(self, release: Callable[[np.ndarray], None] | None = None) -> Iterator[dict[str, np.ndarray]]:
        """keys, tf, indices and data of each block of terms in turn. `release` is given each
        part's postings once a block has read them (stored parts map them: their pages can go)."""
        stride, width = max(len(self.unit_ids), 1), len(FIELDS)
        df, idf = self.arrays["df"], self.arrays["idf"]
        weights = np.array([self.config.field_weights.get(f, 0.0) for f in FIELDS])
        norms = self.arrays["norms"].ravel()
        for low, high in zip(self.bounds[:-1].tolist(), self.bounds[1:].tolist(), strict=True):
            keys, tf = place_parts([_runs(part, low, high, stride, release) for part in self._parts], high - low)
            local = keys - low * stride * width
            indices, data = pair_block(
                local, tf, int(df[low:high].sum()), idf[low:high], weights, norms, self.config.k1, stride
            )
            yield {"keys": keys, "tf": tf, "indices": indices, "data": data}

    def index(self, release: Callable[[np.ndarray], None] | None = None) -> Bm25Index:
        """The merged index in memory, from every block."""
        blocks = list(self.blocks(release))
        arrays = dict(self.arrays)
        for name, dtype in STREAMED.items():
            laid = [block[name] for block in blocks]
            arrays[name] = laid[0] if len(laid) == 1 else np.concatenate([np.zeros(0, dtype), *laid])
        return Bm25Index.from_arrays(self.unit_ids, self.words, arrays, self.config)


def merge(
    parts: Sequence[tuple[Bm25Index, np.ndarray]],
    columns: tuple[list[str], np.ndarray],
    config: Bm25Config,
    release: Callable[[np.ndarray], None] | None = None,
) -> Bm25Index:
    """One index over the units of `parts`, each given with the rows its units take in the
    result (`columns`: ids and role codes in result order), laid out in memory at once (one
    block): what a store that cannot write the index uses. From the parts' (term, unit, field)
    counts: no token is gathered and only distinct counts are sorted. Equal to `build` over the
    same units' tokens except for the numbering of terms. `release` is given each part's
    postings once they are laid out (stored parts map them: their pages can go)."""
    plan = plan_merge(parts, columns, config, block_keys=_WHOLE)
    return plan.index(release)


def plan_merge(
    parts: Sequence[tuple[Bm25Index, np.ndarray]],
    columns: tuple[list[str], np.ndarray],
    config: Bm25Config,
    block_keys: int | None = None,
    release: Callable[[np.ndarray], None] | None = None,
) -> MergePlan:
    """What `merge` gives for the same arguments, planned in blocks of at most `block_keys` keys
    (default `BLOCK_KEYS`) unless one term has more. `release` is given each part's keys once
    its terms are counted: counting reads most of their pages (at 1M units ~90 MB over the
    parts, which stayed resident until the first block)."""
    ids, role_codes = columns
    width = len(FIELDS)
    # A word new to `numbered` gets the next id on its first lookup: one lookup per word, in C.
    numbered: defaultdict[str, int] = defaultdict()
    numbered.default_factory = numbered.__len__
    lengths = np.zeros((width, len(ids)), dtype=np.int32)
    planned = []
    for part, rows in sorted(parts, key=lambda given: int(given[1][0]) if len(given[1]) else 0):
        words = part.words()
        term_of = np.fromiter(map(numbered.__getitem__, words), dtype=np.int32, count=len(words))
        del words
        lengths[:, rows] = part.field_lengths()
        # Kept for every part until the last block (at 1M units ~6M terms over 200 parts): 4 bytes
        # each (`renumber` widens the term ids it gathers: merged keys exceed 32 bits).
        per_term = keys_per_term(part.postings()[0], max(len(part), 1) * width, len(term_of))
        if release is not None:
            release(part.postings()[0])
        order = np.argsort(term_of, kind="stable").astype(np.int32)
        starts = (np.cumsum(per_term) - per_term).astype(np.int32)
        planned.append(_Part(part, rows, term_of, order, term_of[order], per_term.astype(np.int32), starts))
    terms = len(numbered)
    df, keys_of = np.zeros(terms, dtype=np.int64), np.zeros(terms, dtype=np.int64)
    for run in planned:
        df[run.term_of] += run.index.doc_freqs()
        keys_of[run.term_of] += run.per_term
    avgdl = average_lengths(lengths)
    arrays = {
        "roles": np.asarray(role_codes, dtype=np.int8),
        "df": df,
        "idf": idf(len(ids), df),
        "indptr": np.concatenate(([0], np.cumsum(df))),
        "lengths": lengths,
        "avgdl": avgdl,
        "norms": length_norm(lengths, avgdl[:, None], config.k1, config.b),
    }
    return MergePlan(
        unit_ids=ids,
        words=list(numbered),
        arrays=arrays,
        lengths={"keys": int(keys_of.sum()), "tf": int(keys_of.sum()), "indices": int(df.sum()), "data": int(df.sum())},
        bounds=_bounds(keys_of, BLOCK_KEYS if block_keys is None else block_keys),
        config=config,
        _parts=planned,
    )


def _bounds(keys_of: np.ndarray, block_keys: int) -> np.ndarray:
    """Term ids where blocks start, each block as many whole terms as fit in `block_keys` keys
    (at least one), and the end: the last term id + 1."""
    if block_keys < 1:
        raise ValueError(f"the BM25 merge's block budget must be at least 1 key, not {block_keys}")
    ends = np.cumsum(keys_of)
    bounds, low = [0], 0
    while low < len(keys_of):
        base = int(ends[low - 1]) if low else 0
        high = max(int(np.searchsorted(ends, base + block_keys, side="right")), low + 1)
        bounds.append(high)
        low = high
    return np.array(bounds, dtype=np.int64)


def _runs(part: _Part, low: int, high: int, stride: int, release: Callable[[np.ndarray], None] | None):
    """The part's runs of the merged terms [low, high) as `place_parts` takes them; `release`
    is given its postings once they are gathered (a block reads a little of every part: kept
    until the block's end, those pages were ~90 MB at 1M units)."""
    first, last = np.searchsorted(part.merged, [low, high])
    own = part.order[first:last]
    counts = part.per_term[own]
    shift = part.starts[own] - (np.cumsum(counts) - counts)
    at = np.repeat(shift, counts) + np.arange(int(counts.sum()))

    def gathered() -> tuple[np.ndarray, np.ndarray]:
        keys, tf = part.index.postings()
        keys, tf = keys[at], tf[at]
        if release is not None:
            release(part.index.postings()[0])
            release(part.index.postings()[1])
        return renumber(keys, tf, part.term_of, part.rows, max(len(part.index), 1), stride, len(FIELDS))

    return part.merged[first:last] - low, counts, gathered
