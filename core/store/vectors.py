"""Unit vectors kept in the index store, per segment: HDC field vectors of every encoding and the
dense lane's embeddings, so a second run encodes or embeds nothing and an edit costs one file.

Layout: `<segment folder>/vectors/<kind>-<options digest>/` holding `meta.json` and one
`<sha256>.npy` per array, named after its bytes. The options are everything that changes the
vectors (HDC: seed, dimensions, claim windows, character n-grams, the learned model's digest and
the encoder's source; dense: the endpoint's model, the text sent per unit and its cut-off; the
dimension is recorded in the arrays' shapes). Rows follow the segment's units.

Writing: arrays first (each through a temp file and `os.replace`), then `meta.json` the same
way, so the set a reader sees is the old one or the new one, never half of each. Reading checks
the meta's format, kind, options and unit count, every array's CRC-32 against the meta's (a
streaming read, twice as fast as SHA-256 on this machine: the HDC sets are ~1 GB at 1M units),
and its shape and dtype, then memory-maps it. A set that fails any check (truncated, corrupt,
foreign) is removed and rebuilt with an `INDEX_CACHE` warning.

The segment's own folder is keyed by the file's content, so an edited file gets a new folder
(the store removes the old one) and only its vectors are built again.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import threading
import time
import weakref
import zlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from core.store.atomic import replace_file
from core.store.mapped import Damaged, read_array
from core.store.private import private_dirs
from core.store.segment import Segment
from core.store.store import SegmentStore

if TYPE_CHECKING:
    from core.infra.config import HdcConfig
    from core.retrieval.hdc.context import ContextModel
    from core.retrieval.hdc.encoding import UnitVectorCache
    from core.retrieval.row_blocks import RowBlocks
    from core.store.stored import StoredKb
    from core.units import KnowledgeUnit

FORMAT = 2
FOLDER = "vectors"
META = "meta.json"
# Learned HDC models differ per view, so a segment can hold several HDC sets; the oldest go first.
MAX_SETS_PER_KIND = 3
STALE_SECONDS = 3600
Arrays = dict[str, np.ndarray]


@dataclass(frozen=True)
class VectorKey:
    """Which vectors a set holds: `kind` ("hdc", "dense") and the options that shape them."""

    kind: str
    options: Mapping[str, object]

    @property
    def name(self) -> str:
        text = json.dumps({"kind": self.kind, **self.options}, sort_keys=True)
        return f"{self.kind}-{hashlib.sha256(text.encode()).hexdigest()[:20]}"


class VectorSetError(Exception):
    """A stored set that cannot be used; the message says why."""


class SegmentVectors:
    """The vector sets in one store's segment folders; `built[kind]` counts units built.

    Sets read or built in this process stay in memory (one per file and kind), so views of
    the same KB neither re-read nor re-verify them.
    """

    def __init__(self, store: SegmentStore):
        self.store = store
        self.built: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._memory: dict[tuple[str, str], tuple[str, str, Arrays]] = {}
        self._unwritable = False

    def get(self, segment: Segment, key: VectorKey, complete: Callable[[Arrays | None], Arrays]) -> Arrays:
        """The set `key` of `segment`, from memory or disk, passed through `complete`, which
        returns it unchanged when it covers what the caller needs, else a new set (built from
        nothing, or the stored one extended) that is then saved."""
        arrays = self._remembered(segment, key)
        if arrays is None:
            arrays = self.read(segment, key)
        fresh = complete(arrays)
        if fresh is not arrays:
            self.write(segment, key, fresh)
        return self._remember(segment, key, fresh)

    def read(self, segment: Segment, key: VectorKey) -> Arrays | None:
        folder = self._set_folder(segment, key)
        # No meta yet: another process is writing the set, or one died doing so; never published.
        if folder is None or not (folder / META).is_file():
            return None
        try:
            return _load_set(folder, key, len(segment.units))
        except VectorSetError as exc:
            self.store.note(
                str(folder), f"stored {key.kind} vectors of {segment.file} were unusable ({exc}); rebuilt them"
            )
            shutil.rmtree(folder, ignore_errors=True)
            return None

    def write(self, segment: Segment, key: VectorKey, arrays: Arrays) -> None:
        folder = self._set_folder(segment, key)
        if folder is None or self._unwritable or not folder.parent.parent.is_dir():
            return
        try:
            private_dirs(folder, self.store.root)
            old = _referenced(folder)
            entries = {name: _write_array(folder, array) for name, array in arrays.items()}
            meta = {"format": FORMAT, "kind": key.kind, "options": dict(key.options), "units": len(segment.units)}
            replace_file(folder / META, json.dumps({**meta, "arrays": entries}, sort_keys=True).encode())
        except OSError as exc:
            # Said once: a read-only or full cache would otherwise warn for every file.
            with self._lock:
                first, self._unwritable = not self._unwritable, True
            if first:
                self.store.note(str(folder), f"cannot write unit vectors ({exc}); this process keeps them in memory")
            return
        _remove_unreferenced(folder, old, {entry["file"] for entry in entries.values()})
        _keep_newest_sets(folder.parent, key.kind, MAX_SETS_PER_KIND)

    def discard(self, segment: Segment, key: VectorKey) -> None:
        """Forget a set (on disk and in memory): the endpoint's vectors no longer match it."""
        with self._lock:
            self._memory.pop((segment.file, key.kind), None)
        folder = self._set_folder(segment, key)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    def forget_all(self) -> None:
        """Drop every set kept in memory (their files changed under this process)."""
        with self._lock:
            self._memory.clear()

    def count(self, kind: str, units: int) -> None:
        with self._lock:
            self.built[kind] += units

    def _set_folder(self, segment: Segment, key: VectorKey) -> Path | None:
        folder = self.store.folder_of(segment)
        return None if folder is None else folder / FOLDER / key.name

    def _remembered(self, segment: Segment, key: VectorKey) -> Arrays | None:
        with self._lock:
            entry = self._memory.get((segment.file, key.kind))
        return entry[2] if entry is not None and entry[:2] == (segment.key, key.name) else None

    def _remember(self, segment: Segment, key: VectorKey, arrays: Arrays) -> Arrays:
        with self._lock:
            self._memory[(segment.file, key.kind)] = (segment.key, key.name, arrays)
        return arrays


_REGISTRY: weakref.WeakKeyDictionary[SegmentStore, SegmentVectors] = weakref.WeakKeyDictionary()
_REGISTRY_LOCK = threading.Lock()


def vectors_of(store: SegmentStore) -> SegmentVectors:
    """The store's vector sets (one `SegmentVectors` per store, made on first use)."""
    with _REGISTRY_LOCK:
        vectors = _REGISTRY.get(store)
        if vectors is None:
            vectors = _REGISTRY[store] = SegmentVectors(store)
        return vectors


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


# --- the listing `mrptui cache info` prints ----------------------------------------------------


@dataclass(frozen=True)
class SetInfo:
    kind: str
    bytes: int
    units: int
    shape: tuple[int, ...]


def set_infos(path_folder: Path) -> list[SetInfo]:
    """The vector sets under one KB path's segment folder (every key), as their metas describe them."""
    infos = []
    for meta_path in sorted(path_folder.glob(f"*/{FOLDER}/*/{META}")):
        try:
            meta = json.loads(meta_path.read_bytes())
            files = [meta_path.parent / entry["file"] for entry in meta["arrays"].values()]
            size = sum(f.stat().st_size for f in files) + meta_path.stat().st_size
            main: dict = meta["arrays"].get("vectors") or next(iter(meta["arrays"].values()), {"shape": []})
            infos.append(SetInfo(str(meta["kind"]), size, int(meta["units"]), tuple(main["shape"])))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return infos


# --- files ------------------------------------------------------------------------------------


def _write_array(folder: Path, array: np.ndarray) -> dict:
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array), allow_pickle=False)
    data = buffer.getvalue()
    name = f"{hashlib.sha256(data).hexdigest()[:32]}.npy"
    if not (folder / name).is_file():
        replace_file(folder / name, data)
    return {"file": name, "shape": list(array.shape), "dtype": array.dtype.str, "crc32": zlib.crc32(data)}


def _crc_is(crc: int) -> Callable[[bytes | memoryview], bool]:
    return lambda data: zlib.crc32(data) == crc


def _load_set(folder: Path, key: VectorKey, units: int) -> Arrays:
    try:
        meta = json.loads((folder / META).read_bytes())
    except (OSError, ValueError) as exc:
        raise VectorSetError(f"meta.json unreadable: {exc}") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("kind") != key.kind:
        raise VectorSetError(f"format {meta.get('format') if isinstance(meta, dict) else '?'!r}, expected {FORMAT}")
    if meta.get("options") != json.loads(json.dumps(dict(key.options))):
        raise VectorSetError("made with other options")
    if meta.get("units") != units:
        raise VectorSetError(f"{meta.get('units')} rows for {units} units")
    arrays: Arrays = {}
    try:
        for name, entry in meta["arrays"].items():
            crc = entry["crc32"]
            array = read_array(folder / entry["file"], _crc_is(crc))
            if list(array.shape) != entry["shape"] or array.dtype.str != entry["dtype"]:
                raise VectorSetError(f"{name} has shape {array.shape}, expected {tuple(entry['shape'])}")
            arrays[name] = array
    except Damaged as exc:
        raise VectorSetError(f"{name} does not match its checksum") from exc
    except VectorSetError:
        raise
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise VectorSetError(f"unreadable: {exc}") from None
    return arrays


def _referenced(folder: Path) -> set[str]:
    try:
        meta = json.loads((folder / META).read_bytes())
        return {str(entry["file"]) for entry in meta["arrays"].values()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return set()


def _remove_unreferenced(folder: Path, previous: set[str], current: set[str]) -> None:
    """Arrays the previous meta named, and orphans of writers that died long ago (a recent
    unreferenced file may be another process's set in the making)."""
    now = time.time()
    for path in folder.glob("*.npy"):
        if path.name in current:
            continue
        try:
            orphaned = now - path.stat().st_mtime > STALE_SECONDS
        except OSError:
            continue
        if path.name in previous or orphaned:
            path.unlink(missing_ok=True)


def _keep_newest_sets(parent: Path, kind: str, count: int) -> None:
    def written(folder: Path) -> float:
        try:
            return (folder / META).stat().st_mtime
        except OSError:
            return 0.0

    sets = sorted(parent.glob(f"{kind}-*"), key=written, reverse=True)
    for stale in sets[count:]:
        shutil.rmtree(stale, ignore_errors=True)
