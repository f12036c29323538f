"""What a loaded KB keeps from its segments for the indexes built on its views.

- token ids (joined into a `TokenTable` on first use), and BM25 built per segment over the view's
  rows of it (Lucene-style parts, scored with combined statistics by `Bm25Parts`);
- unit vectors (HDC, dense) live in the segment folders too: see core/store/vectors.py.
"""

from __future__ import annotations

import hashlib
import io
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from core.config import Bm25Config
from core.retrieval.bm25 import Bm25Index
from core.safe_io import atomic_write_bytes
from core.store.segment import Segment
from core.store.store import SegmentStore
from core.store.tokens import Tokens, TokenTable, segment_tokens
from core.units import KnowledgeUnit


class PartCache:
    """Per-segment BM25 parts by (file, segment key, config, permitted rows), shared across
    reloads so an edit rebuilds only the edited file's part; least recently used parts go first."""

    def __init__(self, max_parts: int = 1024):
        self._max_parts = max_parts
        self._parts: OrderedDict[tuple, tuple[Segment, Bm25Index]] = OrderedDict()
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


class StoredKb:
    def __init__(self, segments: Mapping[str, Segment], store: SegmentStore):
        self.segments = dict(segments)
        self.store = store
        self._lock = threading.Lock()
        self._table: TokenTable | None = None

    def token_table(self) -> TokenTable:
        with self._lock:
            if self._table is None:
                self._table = TokenTable(list(self.segments.values()))
            return self._table

    def tokens(self, units: Sequence[KnowledgeUnit]) -> Tokens:
        return self.token_table().tokens(units)

    def unit_digests(self, units: Sequence[KnowledgeUnit]) -> list[bytes]:
        return self.token_table().digests(units)

    def bm25_parts(self, units: Sequence[KnowledgeUnit], config: Bm25Config, cache: PartCache) -> list[Bm25Index]:
        """One BM25 index per segment over the given units it holds (plus one for units no
        segment holds); an unchanged segment with the same permitted rows reuses its part."""
        table = self.token_table()
        groups, loose = table.by_segment(units)
        segments = list(self.segments.values())
        parts = []
        for number, positions, rows in groups:
            segment = segments[number]
            subset = [units[p] for p in positions.tolist()]
            digest = hashlib.sha256(config.model_dump_json().encode() + b"\0" + rows.tobytes()).hexdigest()[:24]
            key = (segment.file, segment.key or id(segment), digest)

            def build(segment=segment, subset=subset, digest=digest, rows=rows) -> Bm25Index:
                return self._stored_part(segment, digest, config) or self._keep_part(
                    segment, digest, Bm25Index.build(subset, config, segment_tokens(segment, rows))
                )

            parts.append(cache.get(key, segment, build))
        if len(loose):
            parts.append(Bm25Index.build([units[p] for p in loose.tolist()], config))
        return parts

    def merged_bm25(self, units: Sequence[KnowledgeUnit], config: Bm25Config, build: bool) -> Bm25Index | None:
        """One BM25 index over all the given units (segments merged, as Lucene merges them):
        read from the cache, else built from stored tokens and saved when `build`, else None."""
        folder = self.store.views_folder()
        if folder is None:
            return None
        table = self.token_table()
        groups, loose = table.by_segment(units)
        segments = list(self.segments.values())
        # Units no segment holds, or a segment built without a content key, cannot be named.
        if len(loose) or any(not segments[number].key for number, _, _ in groups):
            return None
        hasher = hashlib.sha256(config.model_dump_json().encode())
        for number, positions, rows in groups:
            hasher.update(f"\0{segments[number].file}\0{segments[number].key}\0".encode())
            hasher.update(positions.tobytes() + rows.tobytes())
        digest = hasher.hexdigest()[:32]
        index = self._read_index(folder, f"bm25-{digest}", config)
        if index is None and build:
            index = Bm25Index.build(units, config, table.tokens(units))
            self._write_index(folder, f"bm25-{digest}", index)
        return index

    def _stored_part(self, segment: Segment, digest: str, config: Bm25Config) -> Bm25Index | None:
        folder = self.store.folder_of(segment)
        return self._read_index(folder, f"bm25-{digest}", config) if folder is not None and folder.is_dir() else None

    def _read_index(self, folder: Path, stem: str, config: Bm25Config) -> Bm25Index | None:
        for path in sorted(folder.glob(f"{stem}-*.npz")):
            try:
                data = _verified(path)
                with np.load(io.BytesIO(data), allow_pickle=False) as stored:
                    arrays = {name: stored[name] for name in Bm25Index._ARRAYS}
                    names = json.loads(stored["names"].tobytes())
                return Bm25Index.from_arrays(names["units"], names["words"], arrays, config)
            except (OSError, ValueError, KeyError):
                path.unlink(missing_ok=True)
        return None

    def _keep_part(self, segment: Segment, digest: str, part: Bm25Index) -> Bm25Index:
        folder = self.store.folder_of(segment)
        if folder is not None and folder.is_dir():
            self._write_index(folder, f"bm25-{digest}", part)
        return part

    def _write_index(self, folder: Path, stem: str, part: Bm25Index) -> None:
        unit_ids, words, arrays = part.to_arrays()
        names = np.frombuffer(json.dumps({"units": unit_ids, "words": words}).encode(), dtype=np.uint8)
        buffer = io.BytesIO()
        np.savez(buffer, names=names, **arrays)
        _write_verified(folder, stem, "npz", buffer.getvalue())


def _write_verified(folder: Path, stem: str, suffix: str, data: bytes) -> bool:
    """Write `data` atomically as `<stem>-<sha256>.<suffix>`; False when the folder is not writable."""
    try:
        atomic_write_bytes(folder / f"{stem}-{hashlib.sha256(data).hexdigest()[:32]}.{suffix}", data)
    except OSError:
        return False
    return True


def _verified(path: Path) -> bytes:
    """The file's bytes, if they match the checksum in its name (ValueError otherwise)."""
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest()[:32] != path.stem.rsplit("-", 1)[1]:
        raise ValueError(f"{path.name} does not match its checksum")
    return data
