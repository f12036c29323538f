"""What a loaded KB keeps from its segments for the indexes built on its views.

- token ids (joined into a `TokenTable` on first use), and BM25 built per segment over the view's
  rows of it (Lucene-style parts, scored with combined statistics by `Bm25Parts`);
- unit vectors (HDC, dense) live in the segment folders too: see core/store/vectors.py.
"""

from __future__ import annotations

import hashlib
import shutil
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from core.infra.config import Bm25Config
from core.retrieval.bm25.index import Bm25Index
from core.retrieval.bm25.parts import Bm25Slice
from core.retrieval.bm25.words import WordList, encode
from core.store.arrays import INDEX_SUFFIX, Streamed, read_arrays, write_arrays
from core.store.mapped import release_array
from core.store.segment import Segment
from core.store.store import SegmentStore
from core.store.tokens import Tokens, TokenTable, segment_columns, segment_tokens
from core.units import KnowledgeUnit


class PartCache:
    """Per-segment BM25 parts by (file, segment key, config, permitted rows), shared across
    reloads so an edit rebuilds only the edited file's part; least recently used parts go first."""

    def __init__(self, max_parts: int = 1024):
        self._max_parts = max_parts
        self._parts: OrderedDict[tuple, tuple[Segment, Bm25Index]] = OrderedDict()
        self._merged: tuple[str, Bm25Index, dict[str, tuple[str, bytes, np.ndarray]]] | None = None
        self._lock = threading.Lock()
        self.builds = 0

    def get(self, key: tuple, segment: Segment, build: Callable[[], Bm25Index]) -> Bm25Index:
        with self._lock:
            entry = self._parts.get(key)
            if entry is not None:
                self._parts.move_to_end(key)
                return entry[1]
        part = build()
        with self._lock:
            # The segment is kept with its part: a key holding id(segment) must not be reused.
            self._parts[key] = (segment, part)
            self.builds += 1
            while len(self._parts) > self._max_parts:
                self._parts.popitem(last=False)
        return part

    def remember_merged(
        self, config: Bm25Config, index: Bm25Index, rows: dict[str, tuple[str, bytes, np.ndarray]]
    ) -> None:
        """The merged index a view uses, and which rows of it each file's rows are (by file:
        segment key, row set, index rows): a reload's view scores the files that did not change
        from it (`Bm25Slice`) instead of reading their parts from the cache. The parts of those
        files are dropped: the index serves them from now on (at 1M units the 200 parts held
        ~0.5 GB), and another view that needs one reads it from the store again."""
        served = {(file, key, _part_digest(config, row_set)) for file, (key, row_set, _) in rows.items()}
        with self._lock:
            self._merged = (config.model_dump_json(), index, rows)
            for key in served & self._parts.keys():
                del self._parts[key]

    def merged(self, config: Bm25Config) -> tuple[Bm25Index, dict[str, tuple[str, bytes, np.ndarray]]] | None:
        with self._lock:
            found = self._merged
        return found[1:] if found is not None and found[0] == config.model_dump_json() else None


class StoredKb:
    def __init__(self, segments: Mapping[str, Segment], store: SegmentStore, prefetched: Prefetched | None = None):
        """`prefetched`: stored indexes read ahead (`prefetch_whole_part`), each taken by its first use."""
        self.segments = dict(segments)
        self.store = store
        self._lock = threading.Lock()
        self._table: TokenTable | None = None
        self._prefetched = prefetched if prefetched is not None else {}

    def token_table(self) -> TokenTable:
        with self._lock:
            if self._table is None:
                self._table = TokenTable(list(self.segments.values()))
            return self._table

    def tokens(self, rows: np.ndarray, extra: Sequence[KnowledgeUnit]) -> Tokens:
        return self.token_table().tokens(rows, extra)

    def unit_digests(self, rows: np.ndarray, extra: Sequence[KnowledgeUnit]) -> bytes:
        return self.token_table().digests(rows, extra)

    def bm25_parts(
        self, rows: np.ndarray, extra: Sequence[KnowledgeUnit], config: Bm25Config, cache: PartCache
    ) -> list[Bm25Index | Bm25Slice]:
        """One BM25 index per segment over the given rows it holds (plus one for current-turn
        units); an unchanged segment with the same permitted rows reuses its part. Files the
        last merged index holds with the same content and rows are one slice of it."""
        table = self.token_table()
        groups, loose = table.by_segment(rows)
        segments = list(self.segments.values())
        merged = cache.merged(config)
        parts: list[Bm25Index | Bm25Slice] = []
        served = []
        for number, positions, local in groups:
            segment = segments[number]
            row_set = _row_set(local, segment)
            there = merged[1].get(segment.file) if merged is not None and segment.key else None
            if there is not None and there[:2] == (segment.key, row_set):
                served.append(there[2])
                continue
            digest = _part_digest(config, row_set)
            key = (segment.file, segment.key or id(segment), digest)

            def build(segment=segment, local=local, digest=digest) -> Bm25Index:
                return (
                    self._stored_part(segment, digest, config, local)
                    or self._from_whole_part(segment, config, local)
                    or self._keep_part(
                        segment,
                        digest,
                        Bm25Index.build((), config, segment_tokens(segment, local), segment_columns(segment, local)),
                    )
                )

            parts.append(cache.get(key, segment, build))
        if served:
            assert merged is not None  # only files it holds are served
            parts.insert(0, Bm25Slice(merged[0], np.concatenate(served)))
        if len(loose):
            parts.append(Bm25Index.build([extra[-1 - int(rows[p])] for p in loose.tolist()], config))
        return parts

    def merged_bm25(
        self,
        rows: np.ndarray,
        extra: Sequence[KnowledgeUnit],
        config: Bm25Config,
        build: bool,
        cache: PartCache | None = None,
    ) -> Bm25Index | None:
        """One BM25 index over all the given rows (segments merged, as Lucene merges them):
        read from the cache, else built from stored tokens and saved when `build`, else None."""
        folder = self.store.views_folder()
        if folder is None:
            return None
        table = self.token_table()
        groups, loose = table.by_segment(rows)
        segments = list(self.segments.values())
        # Current-turn units, or a segment built without a content key, cannot be named.
        if len(loose) or any(not segments[number].key for number, _, _ in groups):
            return None
        # Rows are in id order, so which rows of each segment the view holds names the index. The
        # index holds them file after file (`_LAYOUT`): each file's rows are one range of it.
        hasher = hashlib.sha256(config.model_dump_json().encode() + _LAYOUT)
        for number, _, local in groups:
            hasher.update(f"\0{segments[number].file}\0{segments[number].key}\0".encode())
            hasher.update(_row_set(local, segments[number]))
        stem = f"bm25-{hasher.hexdigest()[:32]}"
        # A reload's new view has no merged index yet: know that before listing every unit id.
        if not build and not _is_dir(folder / f"{stem}{INDEX_SUFFIX}"):
            return None
        starts = np.cumsum([0, *(len(positions) for _, positions, _ in groups)])
        in_files = rows[np.concatenate([np.zeros(0, np.int64), *(positions for _, positions, _ in groups)])]
        columns = table.columns(in_files)
        index = self._read_index(folder, stem, config, columns[0], lookup=True)
        if index is None and build:
            given = self._parts_in_files(rows, extra, config, cache, starts)
            if given is None:
                index = self._built_and_saved(folder, stem, config, self.token_table().tokens(in_files, extra), columns)
            else:
                index = self._merged_and_saved(folder, stem, config, given, columns)
        if index is not None and cache is not None:
            cache.remember_merged(
                config,
                index,
                {
                    segments[number].file: (
                        segments[number].key,
                        _row_set(local, segments[number]),
                        np.arange(start, end),
                    )
                    for (number, _, local), start, end in zip(
                        groups, starts[:-1].tolist(), starts[1:].tolist(), strict=True
                    )
                },
            )
        return index

    def _parts_in_files(
        self,
        rows: np.ndarray,
        extra: Sequence[KnowledgeUnit],
        config: Bm25Config,
        cache: PartCache | None,
        starts: np.ndarray,
    ) -> list[tuple[Bm25Index, np.ndarray]] | None:
        """The view's per-file parts (which a view builds first, for its first question), each
        with its rows in the merged index (the view's rows file after file; file k's from
        `starts[k]`); None when a part is a slice of an older merge."""
        parts = self.bm25_parts(rows, extra, config, cache) if cache is not None else []
        if len(parts) != len(starts) - 1 or not all(isinstance(part, Bm25Index) for part in parts):
            return None
        ranges = [np.arange(start, end) for start, end in zip(starts[:-1].tolist(), starts[1:].tolist(), strict=True)]
        return [(part, rows) for part, rows in zip(parts, ranges, strict=True) if isinstance(part, Bm25Index)]

    def _merged_and_saved(
        self,
        folder: Path,
        stem: str,
        config: Bm25Config,
        given: list[tuple[Bm25Index, np.ndarray]],
        columns: tuple[list[str], np.ndarray],
    ) -> Bm25Index:
        """The parts merged and written a block of terms at a time (`plan_merge`), then mapped
        back as a warm open reads it: merged whole in memory first, its postings (~0.9 GB at 1M
        units) were a cold open's peak. Merged in memory when it cannot be written or read back."""
        # Imported here: a warm open maps the merged index it saved and merges nothing (issue 41).
        from core.retrieval.bm25.merge import STREAMED, merge, plan_merge

        plan = plan_merge(given, columns, config, release=release_array)
        streamed = Streamed(STREAMED, plan.lengths, plan.blocks(release_array), Bm25Index.ARRAYS)
        try:
            write_arrays(
                folder / f"{stem}{INDEX_SUFFIX}",
                {_WORDS: encode(plan.words)},
                plan.arrays,
                self.store.temp_folder(),
                streamed,
            )
        except OSError:
            pass
        del plan, streamed
        return self._read_index(folder, stem, config, columns[0], lookup=True) or merge(
            given, columns, config, release=release_array
        )

    def _built_and_saved(
        self, folder: Path, stem: str, config: Bm25Config, tokens: Tokens, columns: tuple[list[str], np.ndarray]
    ) -> Bm25Index:
        """The index built from the gathered tokens, saved and mapped back. The built one is
        dropped before the read, which checks each file through its mapping: both at once would
        raise the peak. Kept when it cannot be written; built again in the rare case it was
        written but cannot be read."""
        built = Bm25Index.build((), config, tokens, columns)
        if not _write_index(self.store, folder, stem, built):
            return built
        del built
        return self._read_index(folder, stem, config, columns[0], lookup=True) or Bm25Index.build(
            (), config, tokens, columns
        )

    def _stored_part(self, segment: Segment, digest: str, config: Bm25Config, local: np.ndarray) -> Bm25Index | None:
        folder = self.store.folder_of(segment)
        if folder is None or not _is_dir(folder):
            return None
        return self._read_index(folder, f"bm25-{digest}", config, segment_columns(segment, local)[0])

    def _read_index(
        self, folder: Path, stem: str, config: Bm25Config, unit_ids: list[str], lookup: bool = False
    ) -> Bm25Index | None:
        """A stored index; its unit ids are not stored but given (the segments' columns have
        them, in the index's row order), and the index's shapes must fit them. With `lookup`
        (a view's merged index, which answers every question) its words become a dict on the
        first question; else (a file's part: a few questions, then merged) they are looked up
        in the stored text."""
        path = folder / f"{stem}{INDEX_SUFFIX}"
        if not _is_dir(path):
            return None
        read = self._prefetched.pop(path, None)
        try:
            texts, arrays = read if read is not None else read_arrays(path)
            words = WordList(texts[_WORDS], len(arrays["df"]))
            return Bm25Index.from_arrays(unit_ids, words.words() if lookup else words, arrays, config)
        except (OSError, ValueError, KeyError, TypeError):
            shutil.rmtree(path, ignore_errors=True)
        return None

    def _from_whole_part(self, segment: Segment, config: Bm25Config, local: np.ndarray) -> Bm25Index | None:
        """The part over the given rows, cut from the part over all of the segment's rows that
        the cold-open workers build (`keep_whole_part`)."""
        folder = self.store.folder_of(segment)
        if folder is None or not _is_dir(folder):
            return None
        rows = np.arange(len(segment.units))
        whole = self._read_index(folder, _whole_part_stem(config), config, segment_columns(segment, rows)[0])
        return whole.subset(local) if whole is not None else None

    def _keep_part(self, segment: Segment, digest: str, part: Bm25Index) -> Bm25Index:
        folder = self.store.folder_of(segment)
        if folder is not None and _is_dir(folder):
            _write_index(self.store, folder, f"bm25-{digest}", part)
        return part


def _write_index(store: SegmentStore, folder: Path, stem: str, part: Bm25Index) -> bool:
    """Save `part`; False when it could not be written (it is rebuilt next time)."""
    _, words, arrays = part.to_arrays()
    try:
        write_arrays(folder / f"{stem}{INDEX_SUFFIX}", {_WORDS: encode(words)}, arrays, store.temp_folder())
    except OSError:
        return False
    return True


# Stored index folders read ahead: (texts, arrays) as `read_arrays` gives them, by folder.
Prefetched = dict[Path, tuple[dict[str, bytes], dict[str, np.ndarray]]]


def prefetch_whole_part(store: SegmentStore, segment: Segment, config: Bm25Config, into: Prefetched) -> None:
    """Read (and check) the whole-file BM25 part a build worker saved beside `segment` into
    `into`: a cold open's opening process reads each while the pool still builds other files,
    since the first question cuts every file's part from it. One that cannot be read is left
    for its first use to read (and rebuild) as before."""
    folder = store.folder_of(segment)
    if folder is None:
        return
    path = folder / f"{_whole_part_stem(config)}{INDEX_SUFFIX}"
    try:
        into[path] = read_arrays(path)
    except (OSError, ValueError, KeyError, TypeError):
        pass


def keep_whole_part(store: SegmentStore, segment: Segment, config: Bm25Config) -> None:
    """Save the BM25 part over all of a saved segment's rows, in row order, from which any view's
    part of the file is cut without a sort (a cold open's workers build it beside the segment)."""
    folder = store.folder_of(segment)
    if folder is None:
        return
    rows = np.arange(len(segment.units))
    part = Bm25Index.build((), config, segment_tokens(segment, rows), segment_columns(segment, rows))
    _write_index(store, folder, _whole_part_stem(config), part)


_WORDS = "words.json"


def _part_digest(config: Bm25Config, row_set: bytes) -> str:
    return hashlib.sha256(config.model_dump_json().encode() + b"\0" + row_set).hexdigest()[:24]


def _whole_part_stem(config: Bm25Config) -> str:
    return f"bm25-all-{_part_digest(config, b'')}"


# Names the merged index's row order (the view's rows file after file) in its cache key, so an
# index saved with another order is never read with this one's unit ids.
_LAYOUT = b"\0rows by file"


def _row_set(local: np.ndarray, segment: Segment) -> bytes:
    """Which of a segment's rows are given, one bit per row: at 1M units, hashing this instead
    of the row numbers hashes 2 MB instead of 16 per reload."""
    mask = np.zeros(len(segment.units), dtype=bool)
    mask[local] = True
    return np.packbits(mask).tobytes()


def _is_dir(path: Path) -> bool:
    """`Path.is_dir`, False also when the cache cannot be searched (another user's folder)."""
    try:
        return path.is_dir()
    except OSError:
        return False
