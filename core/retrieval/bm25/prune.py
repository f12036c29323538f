"""Exact dynamic pruning for BM25 top-k: block-max MaxScore over the term × unit rows of
`Bm25Index` (docs/scoring.md, "Pruned top-k"; decision in docs/decisions.md).

Every posting of the index's CSR rows already holds its (term, unit) pair's field-weighted BM25
sum, so a term's largest posting bounds what it can add to any unit, and the largest posting of
each block of `BLOCK` postings bounds it for the units that block spans. With the query's count
and the largest role boost the query can give, those are bounds on the final score:

    raw(u) ≤ max boost · Σ_t count_q(t) · max_u w(t, u)

The k best so far set a bar θ (the k-th best score). Terms are sorted by bound; the lowest ones
whose bounds sum below θ are "non-essential": a unit that only they hold cannot reach θ, so only
the essential terms' postings propose candidates. The rows are taken in windows (as Lucene's
MaxScoreBulkScorer does): each essential term adds its postings in the window into a small array
of per-row sums, term at a time (sequential reads, no branch per term), and only a row whose sum
with the non-essential terms' bounds in the window reaches θ looks those terms up (skipping whole
blocks by their last row) while its bound still reaches θ. A window whose bounds all together
stay below θ is passed over unread. A unit whose bound is below θ cannot tie θ either, so ties
(broken by unit id, as the exhaustive path does) are never pruned away.

Exactness: a row's sum is added in query-term order, as the exhaustive `np.bincount` adds it, so
for a unit only essential terms hold it is the same float; when a non-essential term holds it
too, every term's value is re-added in that order. Bounds are inflated by `SLACK` so that adding
them in another order cannot round a bound below the score it bounds.

The kernel is plain Python over numpy arrays; numba compiles it when installed (`pip install
'.[fast]'`), caching the machine code on disk. Without numba, `Bm25Index` keeps the exhaustive
path, whose results are the same. Importing numba and loading the kernel take seconds, so
`bm25_prune_gate.py` imports this module in a background thread when a query first needs it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

import numpy as np

numba: ModuleType | None
trailing_zeros: Callable[[np.uint64], int]
try:
    import numba

    # numba's stub types the intrinsic's compile-time call (typing context, argument); jitted
    # code calls it with the word alone, as the fallback below takes it.
    from numba.cpython.unsafe.numbers import trailing_zeros  # type: ignore[assignment]
except ImportError:  # the optional `fast` extra: the exhaustive path serves instead
    numba = None

    def trailing_zeros(word: np.uint64) -> int:
        return (int(word) & -int(word)).bit_length() - 1


COMPILED = numba is not None
# Postings per block: a block's bound and last row are 12 bytes beside 64 × 12 bytes of postings.
BLOCK = 64
# Float sums of m positive terms in two orders differ by under m · 2⁻⁵³ relative; 1e-9 covers
# any query by far, and loosens the bound by a billionth.
SLACK = 1.0 + 1e-9
_NONE = np.iinfo(np.int64).max
# Rows a window spans at most: its sums per row are a small array read in row order, and one
# word marks which of its 64-row words hold any.
WINDOW = 64 * 64


@dataclass(frozen=True)
class BlockMaxima:
    """Per term of a CSR index: its largest posting; per block of `BLOCK` postings of a term:
    the largest posting and the row of its last posting. Term t's blocks are
    `first[t]:first[t + 1]`."""

    term_max: np.ndarray  # float64 [V]
    first: np.ndarray  # int64 [V + 1]
    block_max: np.ndarray  # float64 [blocks]
    block_last: np.ndarray  # int32 [blocks]


def block_maxima(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray) -> BlockMaxima:
    """One pass over the postings (two `reduceat`s): linear, no Python work per term."""
    counts = (np.diff(indptr) + BLOCK - 1) // BLOCK
    first = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    term_of_block = np.repeat(np.arange(len(counts)), counts)
    starts = indptr[term_of_block] + (np.arange(int(first[-1])) - first[term_of_block]) * BLOCK
    ends = np.minimum(starts + BLOCK, indptr[term_of_block + 1])
    block_max = np.maximum.reduceat(data, starts) if len(starts) else np.zeros(0)
    term_max = np.zeros(len(counts))
    held = counts > 0
    if held.any():
        term_max[held] = np.maximum.reduceat(block_max, first[:-1][held])
    return BlockMaxima(term_max, first, block_max, indices[ends - 1].astype(np.int32))


def _jit(function: Callable) -> Callable:
    """Compiled on first use from compiled code: the helpers of `search`."""
    return numba.njit(cache=True, nogil=True)(function) if numba is not None else function


def _search(
    term_ids: np.ndarray,
    counts: np.ndarray,
    table: np.ndarray,
    max_boost: float,
    k: int,
    indptr: np.ndarray,
    indices: np.ndarray,
    data: np.ndarray,
    term_max: np.ndarray,
    blocks: np.ndarray,
    block_max: np.ndarray,
    block_last: np.ndarray,
    roles: np.ndarray,
    id_rank: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The k best rows (score > 0) with their scores, best first: score desc, then id rank asc.

    `term_ids` are the query's distinct terms in query order, `counts` how often the query says
    each, `table` each role's boost and `max_boost` the largest; the rest is the index (CSR rows
    and `BlockMaxima`, `blocks` being its `first`), each row's role (`table` gives its boost: one
    byte per row to read, not eight) and id rank.

    The loops over postings are written out here rather than in helpers: a compiled helper with
    a loop takes a reference on each array it is given and drops it on return (two atomic
    operations per array per call), which was 40% of the time when the look-ups were helpers.
    The hot loops index with `np.uint64` (every such position is ≥ 0): numba adds a negative
    index's wrap-around (a sign test, an add and often a reload from the stack) to each access
    by a signed one, ~9% of a query's CPU at 100k and 1M units.
    """
    # The per-term state lives in two arrays rather than one each, filled by loops over the few
    # terms rather than numpy's calls: every array the kernel makes is an allocation and a free,
    # and right after another query's sweep each call's code misses the caches (the ~20 arrays
    # made here before cost 2–5 µs more a call at 1M units).
    m = len(term_ids)
    # `pos`: each term's next posting; `cursor`: each non-essential term's first block that may
    # reach into the current window; `window_from`: where its postings in the window start.
    starts, ends, first, after, order, rank_of, pos, cursor, window_from = np.zeros((9, m), np.int64)
    bounds, cum, contrib, rest_cum = np.zeros((4, m))
    for i in range(m):
        t = term_ids[i]
        starts[i], ends[i], first[i], after[i] = indptr[t], indptr[t + 1], blocks[t], blocks[t + 1]
        pos[i], cursor[i] = indptr[t], blocks[t]
        bounds[i] = term_max[t] * counts[i]
    # Terms by bound, ties in query order (a stable insertion sort: a query has a few terms).
    for i in range(m):
        j = i
        while j > 0 and bounds[order[j - 1]] > bounds[i]:
            order[j] = order[j - 1]
            j -= 1
        order[j] = i
    # cum[j]: what terms order[0..j] can add together; the pruning tests multiply it by a boost.
    total = 0.0
    for j in range(m):
        rank_of[order[j]] = j
        total += bounds[order[j]]
        cum[j] = total * SLACK
    heap_score, heap_rank, heap_row = np.zeros(k), np.zeros(k, np.int64), np.zeros(k, np.int64)
    # A window's essential postings, summed per row (`partial`); which rows hold any (`held`, a
    # bit a row; `summary`, a bit a word of `held` that has any).
    partial = np.zeros(WINDOW)
    held = np.zeros(WINDOW // 64, np.uint64)
    hope = max_boost * SLACK
    size, essential, bar = 0, 0, 0.0
    while True:
        while essential < m and cum[essential] * max_boost < bar:
            essential += 1
        # A window starts at the first row an essential term holds (only the non-essential terms
        # hold the rows before it: they cannot reach the bar) and runs to the nearest end of an
        # essential term's current block, so each essential term's postings in it lie in one
        # block, bounded by that block's maximum; and it spans at most `WINDOW` rows.
        window_end, lowest = _NONE, _NONE
        for j in range(essential, m):
            t = order[j]
            if pos[t] < ends[t]:
                window_end = min(window_end, block_last[first[t] + (pos[t] - starts[t]) // BLOCK])
                lowest = min(lowest, indices[pos[t]])
        if window_end == _NONE:
            break
        window_start = lowest
        window_end = min(window_end, window_start + WINDOW - 1)
        # A non-essential term adds at most the largest maximum of its blocks that overlap the
        # window: a long list's blocks are short spans of rows, often far below its largest value.
        total = 0.0
        for j in range(essential):
            t = order[j]
            block = cursor[t]
            while block < after[t] - 1 and block_last[block] < window_start:
                block += 1
            cursor[t] = block
            high = block_max[block] if block < after[t] else 0.0
            while block < after[t] - 1 and block_last[block] < window_end:
                block += 1
                high = max(high, block_max[block])
            total += high * counts[t] * SLACK
            rest_cum[j] = total
        base = rest_cum[essential - 1] if essential > 0 else 0.0
        top = base
        for j in range(essential, m):
            t = order[j]
            if pos[t] < ends[t] and indices[pos[t]] <= window_end:
                top += block_max[first[t] + (pos[t] - starts[t]) // BLOCK] * counts[t] * SLACK
        if top * hope < bar:
            # Nothing in the window can reach the bar: its postings are passed over unread.
            for j in range(essential, m):
                t = order[j]
                at, end = pos[t], ends[t]
                while at < end and indices[np.uint64(at)] <= window_end:
                    at += 1
                pos[t] = at
            continue
        # Added in query-term order, as the exhaustive path adds them: for a row that no
        # non-essential term holds, the sum is its score's float.
        summary = np.uint64(0)
        for t in range(m):
            if rank_of[t] < essential:
                continue
            at, end, times = pos[t], ends[t], counts[t]
            window_from[t] = at
            while at < end and indices[np.uint64(at)] <= window_end:
                offset = np.uint64(indices[np.uint64(at)] - window_start)
                partial[offset] += data[np.uint64(at)] * times
                held[offset >> np.uint64(6)] |= np.uint64(1) << (offset & np.uint64(63))
                summary |= np.uint64(1) << (offset >> np.uint64(6))
                at += 1
            pos[t] = at
        # The rows held, in row order (the non-essential terms' cursors only move forward).
        while summary:
            word_at = _lowest_bit(summary)
            summary &= summary - np.uint64(1)
            word = held[np.uint64(word_at)]
            held[np.uint64(word_at)] = 0
            while word:
                offset = np.uint64(word_at * 64 + _lowest_bit(word))
                word &= word - np.uint64(1)
                row = window_start + np.int64(offset)
                sum_held = partial[offset]
                partial[offset] = 0.0
                # The largest boost first: most rows fail it, and their roles are not read.
                if (sum_held + base) * hope < bar:
                    continue
                boost_bound = table[roles[row]] * SLACK
                if (sum_held + base) * boost_bound < bar:
                    continue
                score, alive, others = sum_held, True, False
                # A non-essential term's blocks that end before the unit are skipped unread; the
                # one that may hold it bounds its value before a binary search reads it.
                for j in range(essential - 1, -1, -1):
                    t = order[j]
                    contrib[t] = 0.0
                    if (sum_held + rest_cum[j]) * boost_bound < bar:
                        alive = False
                        break
                    if pos[t] >= ends[t]:
                        continue
                    block = first[t] + (pos[t] - starts[t]) // BLOCK
                    while block < after[t] - 1 and block_last[block] < row:
                        block += 1
                    if block_last[block] < row:
                        pos[t] = ends[t]
                        continue
                    lo = max(pos[t], starts[t] + (block - first[t]) * BLOCK)
                    hi = min(starts[t] + (block - first[t] + 1) * BLOCK, ends[t])
                    pos[t] = lo
                    if (
                        sum_held + (rest_cum[j - 1] if j > 0 else 0.0) + block_max[block] * counts[t] * SLACK
                    ) * boost_bound < bar:
                        alive = False
                        break
                    lo = _lower_bound(indices, lo, hi, row)
                    pos[t] = lo
                    if lo < ends[t] and indices[lo] == row:
                        contrib[t] = data[lo] * counts[t]
                        sum_held += contrib[t]
                        others = True
                if not alive:
                    continue
                if others:
                    # Each essential term's value at the row, found among its postings in the
                    # window (rows come in order: the next search starts where this one ended),
                    # and all re-added in query-term order.
                    for j in range(essential, m):
                        t = order[j]
                        lo = _lower_bound(indices, window_from[t], pos[t], row)
                        window_from[t] = lo
                        contrib[t] = data[lo] * counts[t] if lo < pos[t] and indices[lo] == row else 0.0
                    score = 0.0
                    for i in range(m):
                        score += contrib[i]
                score *= table[roles[row]]
                if score <= 0.0:
                    continue
                rank = id_rank[row]
                if size < k:
                    _sift_up(heap_score, heap_rank, heap_row, size, score, rank, row)
                    size += 1
                elif score > heap_score[0] or (score == heap_score[0] and rank < heap_rank[0]):
                    _sift_down(heap_score, heap_rank, heap_row, size, score, rank, row)
                if size == k:
                    bar = max(bar, heap_score[0])
    # Heapsort: the worst of the heap goes to its end, repeatedly, leaving the best first.
    for end in range(size - 1, 0, -1):
        score, rank, row = heap_score[end], heap_rank[end], heap_row[end]
        heap_score[end], heap_rank[end], heap_row[end] = heap_score[0], heap_rank[0], heap_row[0]
        _sift_down(heap_score, heap_rank, heap_row, end, score, rank, row)
    return heap_row[:size], heap_score[:size]


@_jit
def _lower_bound(indices: np.ndarray, lo: int, hi: int, row: int) -> int:
    """The first position in [lo, hi) of a term's postings (in row order) whose row is not below `row`."""
    while lo < hi:
        mid = (lo + hi) // 2
        if indices[np.uint64(mid)] < row:
            lo = mid + 1
        else:
            hi = mid
    return lo


@_jit
def _lowest_bit(word: np.uint64) -> np.int64:
    """The position of the lowest bit set in a non-zero word."""
    return np.int64(trailing_zeros(word))


@_jit
def _worse(score_a: float, rank_a: int, score_b: float, rank_b: int) -> bool:
    return score_a < score_b or (score_a == score_b and rank_a > rank_b)


@_jit
def _sift_up(scores, ranks, rows, size, score, rank, row) -> None:
    """Adds an entry to the min-heap (worst at the root) of `size` entries."""
    at = size
    while at > 0:
        parent = (at - 1) // 2
        if not _worse(score, rank, scores[parent], ranks[parent]):
            break
        scores[at], ranks[at], rows[at] = scores[parent], ranks[parent], rows[parent]
        at = parent
    scores[at], ranks[at], rows[at] = score, rank, row


@_jit
def _sift_down(scores, ranks, rows, size, score, rank, row) -> None:
    """Replaces the root of the min-heap with an entry and restores the heap."""
    at = 0
    while True:
        child = 2 * at + 1
        if child >= size:
            break
        if child + 1 < size and _worse(scores[child + 1], ranks[child + 1], scores[child], ranks[child]):
            child += 1
        if not _worse(scores[child], ranks[child], score, rank):
            break
        scores[at], ranks[at], rows[at] = scores[child], ranks[child], rows[child]
        at = child
    scores[at], ranks[at], rows[at] = score, rank, row


class Pruner:
    """An index's block maxima, computed on its first pruned query (one linear pass over the
    postings), and the pruned search over them."""

    def __init__(
        self, indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, roles: np.ndarray, id_rank: np.ndarray
    ):
        # Plain contiguous arrays of the compiled signature's types: no copy when they already are.
        self._indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        self._indices = np.ascontiguousarray(indices, dtype=np.int32)
        self._data = np.ascontiguousarray(data, dtype=np.float64)
        self._roles = np.ascontiguousarray(roles, dtype=np.int8)
        self._id_rank = np.ascontiguousarray(id_rank, dtype=np.int64)
        self.maxima = maxima = block_maxima(self._indptr, self._indices, self._data)
        # The kernel's index arguments in its order, gathered once: a query passes them in one go.
        self._arrays = (
            self._indptr,
            self._indices,
            self._data,
            maxima.term_max,
            maxima.first,
            maxima.block_max,
            maxima.block_last,
            self._roles,
            self._id_rank,
        )

    def top_k(
        self, term_ids: np.ndarray, counts: np.ndarray, table: np.ndarray, max_boost: float, k: int, kernel: Callable
    ) -> tuple[np.ndarray, np.ndarray]:
        """The k best rows and their scores, best first, for distinct terms in query order
        (int64 ids, float64 counts); `table` is each role's boost (float64) and `max_boost` its
        largest. The compiled `search` takes exactly these types (see `_compiled_search`)."""
        return kernel(term_ids, counts, table, max_boost, k, *self._arrays)


def _compiled_search() -> Callable:
    """`_search` compiled when this module is imported (or loaded from numba's disk cache), for
    the one signature `Pruner` calls it with: read-only index arrays also take writable ones, and
    no query ever waits for a compile.

    What is returned is that compilation's entry point, not numba's dispatcher: the dispatcher
    types all 14 arguments on every call and, the arrays being writable where the signature
    reads them read-only, looks up a conversion for each; right after a query's sweep at 1M
    units that was ~4 µs a call. The entry point converts each argument to the signature's type
    without checking it, so it must be given exactly these types: `Pruner` makes its arrays so,
    and `Bm25Index.top_k` the query's."""
    if numba is None:
        return _search
    fixed = numba.types
    index_array = {
        dtype: fixed.Array(dtype, 1, "C", readonly=True)
        for dtype in (fixed.int64, fixed.int32, fixed.int8, fixed.float64)
    }
    signature = (
        fixed.int64[::1],
        fixed.float64[::1],
        index_array[fixed.float64],
        fixed.float64,
        fixed.int64,
        index_array[fixed.int64],
        index_array[fixed.int32],
        index_array[fixed.float64],
        index_array[fixed.float64],
        index_array[fixed.int64],
        index_array[fixed.float64],
        index_array[fixed.int32],
        index_array[fixed.int8],
        index_array[fixed.int64],
    )
    compiled = numba.njit(signature, cache=True, nogil=True)(_search)
    return compiled.overloads[signature].entry_point


search = _compiled_search()
