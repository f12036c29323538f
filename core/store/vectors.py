"""A view's unit vectors from the sets the index store keeps per segment (core/store/vector_sets.py):
HDC field vectors of every encoding and the dense lane's embeddings, so a second run encodes or
embeds nothing and an edit costs one file. Units no stored segment holds are built in memory by
the caller.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from core.store.segment import Segment
from core.store.store import SegmentStore
from core.store.vector_sets import Arrays, SegmentVectors, VectorKey, vectors_of

if TYPE_CHECKING:
    from core.infra.config import HdcConfig
    from core.retrieval.hdc.context import ContextModel
    from core.retrieval.hdc.unit_cache import UnitVectorCache
    from core.retrieval.row_blocks import RowBlocks
    from core.store.stored import StoredKb
    from core.units import KnowledgeUnit


# --- assembling a view's rows from per-segment sets -------------------------------------------


def view_rows(
    stored: StoredKb | None,
    units: Sequence[KnowledgeUnit],
    per_segment: Callable[[SegmentVectors, Segment, np.ndarray], Arrays],
) -> tuple[list[tuple[np.ndarray, Arrays, np.ndarray]], np.ndarray]:
    """For each segment holding some of `units`: (positions in `units`, its set, rows within
    the segment); plus the positions no stored segment holds (built in memory by the caller).
    `per_segment(vectors, segment, rows)` returns the segment's set covering at least `rows`."""
    rows = getattr(units, "rows", None)  # a view's units are table rows (core/kb/unit_table.py)
    if stored is None or not stored.store.enabled or rows is None:
        return [], np.arange(len(units))
    groups, loose = stored.token_table().by_segment(rows)
    segments = list(stored.segments.values())
    vectors = vectors_of(stored.store)
    out = []
    for number, positions, rows in groups:
        segment = segments[number]
        if not segment.key:
            loose = np.concatenate([loose, positions])
            continue
        out.append((positions, per_segment(vectors, segment, rows), rows))
    return out, np.sort(loose)


def gather_windows(counts: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Indexes into a claim-window matrix (unit i owns `counts[i]` consecutive rows) of the
    windows of `rows`, in row order."""
    starts = np.cumsum(counts) - counts
    picked = counts[rows]
    offsets = np.arange(int(picked.sum())) - np.repeat(np.cumsum(picked) - picked, picked)
    return np.repeat(starts[rows], picked) + offsets


# --- HDC: topic vectors, claim windows and window counts per unit ------------------------------


def hdc_vectors(
    stored: StoredKb | None,
    units: Sequence[KnowledgeUnit],
    config: HdcConfig,
    model: ContextModel | None,
    fallback: UnitVectorCache,
) -> tuple[np.ndarray | RowBlocks, np.ndarray | RowBlocks, np.ndarray, np.ndarray | None]:
    """Topic [N, 64], claim windows [W, 64] and windows per unit [N] of `units`: each stored
    segment's set read (or encoded whole and saved), units no segment holds from `fallback`.
    When every unit is in a stored segment, topic and claim are blocks of the stored sets
    (`RowBlocks`, read in place) in the segments' order, the counts follow that order, and the
    last item maps each of `units` to its row there; else one matrix each in `units`' order
    and None."""
    from core.retrieval.hdc.encoding import WORDS

    def per_segment(vectors: SegmentVectors, segment: Segment, rows: np.ndarray) -> Arrays:
        return _hdc_set(vectors, segment, config, model)

    if stored is not None and model is None:
        from core.store.pool import wait_for_hdc_sets

        # A cold open's encoders may still be writing the sets this view reads (core/store/pool.py).
        wait_for_hdc_sets(stored.store.root)
    groups, loose = view_rows(stored, units, per_segment)
    if not len(loose):
        return _blocks(groups, len(units))
    topic = np.empty((len(units), WORDS), dtype=np.uint64)
    counts = np.empty(len(units), dtype=np.int64)
    pieces = []  # (positions in the view, a claim matrix, its rows for those positions' windows)
    for positions, arrays, rows in groups:
        stored_counts = np.asarray(arrays["counts"])
        topic[positions] = arrays["topic"][rows]
        counts[positions] = stored_counts[rows]
        pieces.append((positions, arrays["claim"], gather_windows(stored_counts, rows)))
    if len(loose):
        loose_topic, windows = fallback.vectors([units[i] for i in loose.tolist()], config, model)
        topic[loose] = loose_topic
        counts[loose] = [len(w) for w in windows]
        pieces.append((loose, np.concatenate(windows), np.arange(int(counts[loose].sum()))))
    claim = np.empty((int(counts.sum()), WORDS), dtype=np.uint64)
    for positions, matrix, source in pieces:
        claim[gather_windows(counts, positions)] = matrix[source]
    return topic, claim, counts, None


def _blocks(
    groups: list[tuple[np.ndarray, Arrays, np.ndarray]], units: int
) -> tuple[RowBlocks, RowBlocks, np.ndarray, np.ndarray]:
    """The view's vectors as blocks of the stored sets, in the segments' order, without copying
    them: the rows of a set the view keeps in one stretch are read in place; rows the view
    filters (ACL, region, dates) are gathered, so only permitted rows are ever in the index.
    Also each block row's window count, and for each of the view's units its block row."""
    from core.retrieval.hdc.encoding import WORDS
    from core.retrieval.row_blocks import RowBlocks

    topics, claims, counts = [], [], []
    order = np.empty(units, dtype=np.int64)
    at = 0
    for positions, arrays, rows in groups:
        stored_counts = np.asarray(arrays["counts"])
        if len(rows) and int(rows[-1]) - int(rows[0]) + 1 == len(rows) and bool(np.all(np.diff(rows) > 0)):
            first, last = int(rows[0]), int(rows[-1])
            window_start = int(stored_counts[:first].sum())
            topics.append(arrays["topic"][first : last + 1])
            claims.append(arrays["claim"][window_start : window_start + int(stored_counts[first : last + 1].sum())])
        else:
            topics.append(np.asarray(arrays["topic"][rows]))
            claims.append(np.asarray(arrays["claim"][gather_windows(stored_counts, rows)]))
        counts.append(stored_counts[rows])
        order[positions] = np.arange(at, at + len(positions))
        at += len(positions)
    count = np.concatenate(counts).astype(np.int64) if counts else np.zeros(0, dtype=np.int64)
    return RowBlocks(topics, WORDS), RowBlocks(claims, WORDS), count, order


def hdc_segment_vectors(store: SegmentStore, segment: Segment, config: HdcConfig) -> Arrays:
    """The HDC set of a whole segment without learned vectors (read, or encoded and saved):
    what a cold open's build workers (core/store/pool.py) prepare beside each segment."""
    return _hdc_set(vectors_of(store), segment, config, None)


def _hdc_set(vectors: SegmentVectors, segment: Segment, config: HdcConfig, model: ContextModel | None) -> Arrays:
    from core.retrieval.hdc.encoding import encoding_options
    from core.retrieval.hdc.tokens import encode_tokenised

    def complete(arrays: Arrays | None) -> Arrays:
        if arrays is not None:
            return arrays
        # The segment's own token ids: the file is not tokenised a second time.
        topic, claim, counts = encode_tokenised(
            segment.units, segment.words, segment.terms, segment.lengths, config, model
        )
        vectors.count("hdc", len(segment.units))
        return {"topic": topic, "claim": claim, "counts": counts}

    return vectors.get(segment, VectorKey("hdc", encoding_options(config, model)), complete)


# --- dense: one embedding per unit, kept for the rows some view asked for --------------------


@dataclass
class DenseVectors:
    """A view's embeddings [N, D] and the stored sets they came from (`forget` drops those)."""

    matrix: np.ndarray
    sources: list[tuple[SegmentVectors, Segment, VectorKey]]

    def forget(self) -> None:
        for vectors, segment, key in self.sources:
            vectors.discard(segment, key)


def dense_vectors(
    stored: StoredKb | None,
    units: Sequence[KnowledgeUnit],
    options: Mapping[str, object],
    embed: Callable[[Sequence[KnowledgeUnit]], np.ndarray],
    loose_vectors: Callable[[Sequence[KnowledgeUnit]], np.ndarray],
) -> DenseVectors:
    """Embeddings of `units`, unit-length float32 rows. A segment's set holds the rows some view
    has asked for (`have`): only units a caller may see are ever sent to the endpoint, and a
    row is embedded once. Units no segment holds come from `loose_vectors`. `embed` raises
    EmbeddingError; rows of another dimension than the endpoint now answers are embedded again."""
    key = VectorKey("dense", options)
    sources: list[tuple[SegmentVectors, Segment, VectorKey]] = []

    def per_segment(vectors: SegmentVectors, segment: Segment, rows: np.ndarray) -> Arrays:
        def complete(arrays: Arrays | None) -> Arrays:
            have = np.zeros(len(segment.units), dtype=bool) if arrays is None else np.asarray(arrays["have"])
            missing = rows[~have[rows]]
            if not len(missing):
                return arrays  # type: ignore[return-value]  # rows given, so a set exists
            fresh = embed([segment.units[r] for r in missing.tolist()])
            vectors.count("dense", len(missing))
            if arrays is not None and arrays["vectors"].shape[1] != fresh.shape[1]:
                return complete(None)  # the model now answers another dimension: start afresh
            if arrays is None:
                matrix = np.zeros((len(segment.units), fresh.shape[1]), np.float32)
            else:
                matrix = np.array(arrays["vectors"])
            matrix[missing] = fresh
            have = have.copy()
            have[missing] = True
            return {"vectors": matrix, "have": have}

        sources.append((vectors, segment, key))
        return vectors.get(segment, key, complete)

    groups, loose = view_rows(stored, units, per_segment)
    parts = [(positions, np.asarray(arrays["vectors"])[rows]) for positions, arrays, rows in groups]
    if len(loose):
        parts.append((loose, loose_vectors([units[i] for i in loose.tolist()])))
    dims = {matrix.shape[1] for _, matrix in parts}
    if len(dims) > 1:
        _drop_mixed(sources, dims)
    matrix = np.zeros((len(units), dims.pop() if dims else 1), dtype=np.float32)
    for positions, rows in parts:
        matrix[positions] = rows
    return DenseVectors(matrix, sources)


def _drop_mixed(sources: list[tuple[SegmentVectors, Segment, VectorKey]], dims: set[int]) -> None:
    """Stored sets of different dimensions (the model changed between files' first use): drop
    them all so the next build embeds every row with the model as it is now."""
    from core.infra.embeddings import EmbeddingError

    DenseVectors(np.zeros((0, 1)), sources).forget()
    raise EmbeddingError(
        f"stored embeddings have different lengths {sorted(dims)}: the endpoint's model changed; "
        "they are dropped and embedded again on the next query"
    )
