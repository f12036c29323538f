"""One KB file's segment: its units, diagnostics, token ids, field lengths and stems.

On disk a segment is a folder of a few files: `units.jsonl` with `offsets.npy` (each unit's JSON,
restored on first use), `columns.json` with `cols.npy` (ids, permission classes, locations, roles:
what opening a KB needs of every unit), `diagnostics.json`, `words.json` (the segment's
vocabulary), `stems.json`, and `terms.npy` / `lengths.npy` (memory-mapped on open), plus
`meta.json` with the format version, key, shapes and a keyed digest of every other file
(core/store/private.py). A folder is written under a temp name and renamed into place, and `load`
checks every digest and shape, so a truncated, corrupt, rewritten or foreign segment is refused
(`SegmentError`) rather than half used. Small files are read into memory, large ones mapped and
watched (core/store/mapped.py).
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import compress
from operator import eq, not_
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np
from pydantic import TypeAdapter

from core.cnl.caps import CAPS
from core.infra.collector import collector_paused
from core.infra.diagnostics import Diagnostic
from core.retrieval.bm25.fields import FIELDS, field_texts
from core.store.arrays import save_npy, write_blob
from core.store.atomic import replace_file, temp_dir
from core.store.codec import SET, StoredUnits, UnitColumns, dump_units
from core.store.groups import Source, members
from core.store.mapped import Damaged, read_array, read_checked
from core.store.private import Mac, write_private
from core.store.terms import tokenise_texts
from core.units import KnowledgeUnit

if TYPE_CHECKING:
    from core.cnl.source import ReadResult

FORMAT_VERSION = 6
_DIAGNOSTICS = TypeAdapter(list[Diagnostic])
_ARRAYS = ("terms", "lengths", "digests", "offsets", "cols", "texts")


class SegmentError(Exception):
    """A stored segment that cannot be used (missing, truncated, corrupt or another format)."""


@dataclass(frozen=True)
class Segment:
    """What reading and tokenising one file produced.

    `terms` holds segment-local term ids (indexes into `words`) of every token, unit by unit and
    field by field in `FIELDS` order; `lengths[i, f]` is unit i's token count in field f.
    """

    file: str
    key: str
    units: Sequence[KnowledgeUnit]
    diagnostics: tuple[Diagnostic, ...]
    words: Sequence[str]
    terms: np.ndarray
    lengths: np.ndarray
    stems: SegmentStems
    digests: np.ndarray  # uint8 [n, 16]: `unit_digest` of each unit, for view versions
    columns: UnitColumns
    texts: np.ndarray  # uint8 [n, 8]: digest of each unit's tokenised text, to reuse its tokens
    offsets: np.ndarray | None = None  # where each unit's JSON starts in units.jsonl
    unit_json: bytes | None = None  # a built segment's units.jsonl (dumped once, for digests and save)

    @property
    def cols(self) -> np.ndarray:
        return self.columns.cols

    @classmethod
    def build(cls, file: Source, key: str, earlier: Segment | None = None) -> Segment:
        """Read and tokenise `file`. With `earlier` (this file's previous segment), a unit whose
        tokenised text is unchanged reuses its token ids instead of being tokenised again: an
        edit costs reading the file plus tokenising what changed. The vocabulary then keeps
        the earlier words (ids unchanged) and appends new ones; an unused word is harmless, as
        indexes keep only the terms their rows contain."""
        with collector_paused():
            return cls._build(file, key, earlier)

    @classmethod
    def _build(cls, file: Source, key: str, earlier: Segment | None) -> Segment:
        vocab: dict[str, int] = {word: i for i, word in enumerate(earlier.words)} if earlier is not None else {}
        problems: list[Diagnostic] = []
        parts: list[_Part] = []
        pending: list[KnowledgeUnit] = []
        for units, found in _pieces(file):
            problems += found
            pending += units
            if len(pending) >= CAPS.piece_units:
                parts.append(_Part.of(pending, vocab, earlier, keep=False))
                pending = []
        if pending or not parts:
            parts.append(_Part.of(pending, vocab, earlier, keep=not parts))
        part = parts[0] if len(parts) == 1 else _Part.joined(parts)
        return cls(
            file=str(file),
            key=key,
            # Pieces' units were dropped as they were stored: they are restored from the JSON.
            units=part.units
            if part.units is not None
            else StoredUnits(part.unit_json, part.offsets, part.columns.cols[:, SET]),
            diagnostics=tuple(problems),
            words=tuple(vocab),
            terms=part.terms,
            lengths=part.lengths,
            stems=SegmentStems.of(part.stems),
            digests=part.digests,
            columns=part.columns,
            texts=part.texts,
            offsets=part.offsets,
            unit_json=part.unit_json,
        )

    def without_json(self) -> Segment:
        """This segment without the units' JSON kept from its build (saved, it is not needed)."""
        return self if self.unit_json is None else replace(self, unit_json=None)

    def save(self, parent: Path, mac: Mac, extra: dict[str, np.ndarray] | None = None) -> Path:
        """Write the segment's files into a new temp folder under `parent` (`temp_dir`); returns
        that folder (removed again when a write fails, e.g. a full disk). `extra` arrays are saved
        as `<name>.npy` beside them; every file's keyed digest goes into `meta.json`."""
        folder = temp_dir(parent, self.key)
        try:
            self._write(folder, mac, extra)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        return folder

    def _write(self, folder: Path, mac: Mac, extra: dict[str, np.ndarray] | None) -> None:
        if self.unit_json is not None and self.offsets is not None:
            units, offsets = self.unit_json, self.offsets
        else:
            units, offsets = self.units.dump() if isinstance(self.units, StoredUnits) else dump_units(self.units)
        blobs = {
            "units.jsonl": units,
            "columns.json": self.columns.dump(),
            "diagnostics.json": _DIAGNOSTICS.dump_json(list(self.diagnostics)),
            "words.json": json.dumps(self.words).encode(),
            "stems.json": self.stems.dump(),
        }
        arrays = {name: offsets if name == "offsets" else getattr(self, name) for name in _ARRAYS}
        arrays.update(extra or {})
        digests = {name: write_blob(folder / name, data, mac) for name, data in blobs.items()}
        digests.update({f"{name}.npy": save_npy(folder / f"{name}.npy", array, mac) for name, array in arrays.items()})
        meta = {
            "format": FORMAT_VERSION,
            "key": self.key,
            "file": self.file,
            "units": len(self.units),
            "tokens": len(self.terms),
            "words": len(self.words),
            "macs": digests,
        }
        # meta.json last: a folder without it is incomplete and never loads.
        write_private(folder / "meta.json", [json.dumps(meta).encode()])

    @classmethod
    def load(cls, folder: Path, key: str, mac: Mac) -> Segment:
        """Read and verify a stored segment; raises SegmentError when it cannot be trusted: a
        file whose keyed digest differs (rewritten by anything but the store, or damaged), a
        missing one, another format or key, or shapes that do not fit."""
        try:
            meta = json.loads((folder / "meta.json").read_bytes())
            if meta.get("format") != FORMAT_VERSION or meta.get("key") != key:
                raise SegmentError(f"format {meta.get('format')!r}, expected {FORMAT_VERSION}")
            macs = meta["macs"]
            arrays = {name: read_array(folder / f"{name}.npy", _matches(mac, macs[f"{name}.npy"])) for name in _ARRAYS}
            data = {
                name: read_checked(folder / name, _matches(mac, digest))
                for name, digest in macs.items()
                if name.removesuffix(".npy") not in arrays
            }
            columns = UnitColumns.load(bytes(data["columns.json"]), np.asarray(arrays["cols"]))
            offsets = arrays["offsets"]
            units = StoredUnits(data["units.jsonl"], offsets, columns.cols[:, SET])
            segment = cls(
                file=meta["file"],
                key=key,
                units=units,
                diagnostics=tuple(_DIAGNOSTICS.validate_json(bytes(data["diagnostics.json"]))),
                # Parsed on first use: a view whose merged BM25 index is stored never needs them.
                words=StoredWords(data["words.json"], int(meta["words"])),
                terms=arrays["terms"],
                lengths=arrays["lengths"],
                stems=SegmentStems(data["stems.json"]),
                digests=arrays["digests"],
                columns=columns,
                texts=arrays["texts"],
                offsets=offsets,
            )
        except SegmentError:
            raise
        except Damaged as exc:
            raise SegmentError(str(exc)) from exc
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise SegmentError(f"unreadable: {exc}") from exc
        segment.check_shape(meta)
        return segment

    @staticmethod
    def stored_file(folder: Path, name: str, key: str, mac: Mac) -> bytes | memoryview:
        """One file of the stored segment `key` (a stem table, a block table) without loading the
        rest, checked like `load` checks it (format, key, keyed digest); SegmentError otherwise."""
        try:
            meta = json.loads((folder / "meta.json").read_bytes())
            if meta.get("format") != FORMAT_VERSION or meta.get("key") != key:
                raise SegmentError(f"format {meta.get('format')!r}, expected {FORMAT_VERSION}")
            return read_checked(folder / name, _matches(mac, meta["macs"][name]))
        except SegmentError:
            raise
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise SegmentError(f"unreadable: {exc}") from exc

    @staticmethod
    def add_array(folder: Path, key: str, mac: Mac, name: str, array: np.ndarray) -> None:
        """Add `<name>.npy` to the published segment `key` in `folder` (a block table made after
        the first answer): the array first, then `meta.json` with its keyed digest, each replaced
        atomically, so a crash between leaves a file no digest names, which `stored_file`
        refuses. SegmentError when the folder is not that segment; OSError when a write fails."""
        try:
            meta = json.loads((folder / "meta.json").read_bytes())
            if meta.get("format") != FORMAT_VERSION or meta.get("key") != key:
                raise SegmentError(f"format {meta.get('format')!r}, expected {FORMAT_VERSION}")
            macs = meta["macs"]
            if not isinstance(macs, dict):
                raise SegmentError("meta.json names no digests")
        except SegmentError:
            raise
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise SegmentError(f"unreadable: {exc}") from exc
        file = f"{name}.npy"
        if file in macs:
            return
        fd, temp = tempfile.mkstemp(dir=folder, prefix=f".{file}.", suffix=".tmp")
        os.close(fd)
        try:
            macs[file] = save_npy(Path(temp), array, mac)
            os.replace(temp, folder / file)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
        replace_file(folder / "meta.json", json.dumps(meta).encode())

    def check_shape(self, meta: dict) -> None:
        expected = (len(self.units), len(FIELDS))
        if (
            len(self.units) != meta["units"]
            or self.lengths.shape != expected
            or self.digests.shape != (len(self.units), 16)
            or self.texts.shape != (len(self.units), 8)
            or len(self.columns.ids) != len(self.units)
            or self.terms.dtype != np.int32
            or self.lengths.dtype != np.int32
            or len(self.terms) != int(self.lengths.sum())
            or len(self.terms) != meta["tokens"]
            or len(self.words) != meta["words"]
            or (len(self.terms) and (int(self.terms.min()) < 0 or int(self.terms.max()) >= len(self.words)))
        ):
            raise SegmentError("array shapes do not match the segment's units")


def _pieces(source: Source) -> Iterator[ReadResult]:
    """The units and diagnostics of a file (a piece at a time), or of a group's files in turn."""
    # The readers load when a file is read, not when a cached segment is: a warm `ask` reads none.
    from core.cnl.source import read_pieces

    for file in members(source):
        yield from read_pieces(file)


@dataclass(frozen=True)
class _Part:
    """What a segment holds of some of its units: a large file is built a piece at a time, so
    that only one piece's `KnowledgeUnit`s are alive at once (a 300,000-line JSON Lines KB held
    0.8 GB of them)."""

    units: tuple[KnowledgeUnit, ...] | None  # None once joined: restored from `unit_json`
    texts: np.ndarray
    terms: np.ndarray
    lengths: np.ndarray
    stems: dict[str, str]
    unit_json: bytes
    offsets: np.ndarray
    digests: np.ndarray
    columns: UnitColumns

    @classmethod
    def of(cls, units: list[KnowledgeUnit], vocab: dict[str, int], earlier: Segment | None, keep: bool) -> _Part:
        """The part of `units` (kept with it when `keep`); new words join `vocab` (shared by a
        segment's parts)."""
        texts = [field_texts(unit) for unit in units]
        text_digests = np.frombuffer(b"".join(map(text_digest, texts)), dtype=np.uint8).reshape(len(units), 8)
        terms, lengths, stems = _tokens(texts, text_digests, vocab, earlier)
        unit_json, offsets = dump_units(units)
        view = memoryview(unit_json)
        digests = (
            hashlib.blake2b(view[start:end], digest_size=16).digest()
            for start, end in zip(offsets[:-1].tolist(), offsets[1:].tolist())
        )
        return cls(
            tuple(units) if keep else None,
            text_digests,
            terms,
            lengths,
            stems,
            unit_json,
            offsets,
            np.frombuffer(b"".join(digests), dtype=np.uint8).reshape(len(units), 16),
            UnitColumns.of(units),
        )

    @classmethod
    def joined(cls, parts: Sequence[_Part]) -> _Part:
        ends = np.cumsum([0, *(len(part.unit_json) for part in parts)])
        offsets = np.concatenate([[0], *(part.offsets[1:] + end for part, end in zip(parts, ends[:-1].tolist()))])
        return cls(
            None,
            np.concatenate([part.texts for part in parts]),
            np.concatenate([part.terms for part in parts]),
            np.concatenate([part.lengths for part in parts]),
            {word: stem for part in parts for word, stem in part.stems.items()},
            b"".join(part.unit_json for part in parts),
            offsets.astype(np.int64),
            np.concatenate([part.digests for part in parts]),
            UnitColumns.join([part.columns for part in parts]),
        )


def text_digest(texts: tuple[str, ...]) -> bytes:
    return hashlib.blake2b("\x1f".join(texts).encode("utf-8", "surrogatepass"), digest_size=8).digest()


def _matches(mac: Mac, digest: str):
    return lambda data: mac.of_bytes(data) == digest


def _tokens(texts: list[tuple[str, ...]], digests: np.ndarray, vocab: dict[str, int], earlier: Segment | None):
    """Term ids of every unit's fields (unit by unit), their lengths [n, F] and the stem table,
    tokenising only units whose text `earlier` does not hold; new terms join `vocab`."""
    reuse = TokenReuse(earlier) if earlier is not None else None
    found = (
        [reuse.tokens(digests[row].tobytes()) for row in range(len(texts))]
        if reuse is not None
        else [None] * len(texts)
    )
    fresh = [row for row, hit in enumerate(found) if hit is None]
    batch = tokenise_texts([text for row in fresh for text in texts[row]], vocab)
    lengths = np.zeros((len(texts), len(FIELDS)), dtype=np.int32)
    lengths[fresh] = batch.counts.reshape(len(fresh), len(FIELDS))
    if earlier is None:
        return batch.terms, lengths, batch.stems
    pieces: list[np.ndarray | None] = [hit[0] if hit is not None else None for hit in found]
    for row, hit in enumerate(found):
        if hit is not None:
            lengths[row] = hit[1]
    if fresh:
        for row, ids in zip(fresh, np.split(batch.terms, np.cumsum(lengths[fresh].sum(axis=1))[:-1]), strict=True):
            pieces[row] = ids
    # Every row is filled now: a hit's ids above, a fresh row's in the loop.
    terms = np.concatenate(cast(list[np.ndarray], pieces)) if pieces else np.zeros(0, np.int32)
    return terms, lengths, {**earlier.stems.table(), **batch.stems}


class TokenReuse:
    """An earlier segment's token ids by unit text: what an edit leaves unchanged is not tokenised."""

    def __init__(self, earlier: Segment):
        self._terms = np.asarray(earlier.terms)
        self._lengths = np.asarray(earlier.lengths)
        totals = self._lengths.sum(axis=1, dtype=np.int64)
        self._ends = np.cumsum(totals)
        self._starts = self._ends - totals
        texts = np.asarray(earlier.texts)
        self._row = {texts[row].tobytes(): row for row in range(len(texts))}

    def tokens(self, digest: bytes) -> tuple[np.ndarray, np.ndarray] | None:
        row = self._row.get(digest)
        if row is None:
            return None
        return self._terms[self._starts[row] : self._ends[row]], self._lengths[row]


class StoredWords(Sequence[str]):
    """A stored segment's vocabulary, read on first use: a view whose merged BM25 index is in
    the cache never needs it (its length comes from the checksummed meta.json)."""

    def __init__(self, data: bytes | memoryview, count: int):
        self._data = data
        self._count = count
        self._words: tuple[str, ...] | None = None
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._count

    def _loaded(self) -> tuple[str, ...]:
        with self._lock:
            if self._words is None:
                words = tuple(json.loads(bytes(self._data)))
                if len(words) != self._count:
                    raise SegmentError(f"words.json holds {len(words)} words, expected {self._count}")
                self._words = words
            return self._words

    def __getitem__(self, index):  # type: ignore[override]
        return self._loaded()[index]

    def __iter__(self):
        return iter(self._loaded())


class SegmentStems:
    """A segment's stem table: the words that are their own stem (a sorted list, searched by
    bisection) and the others' stems. A stored one is read on its first lookup: most questions
    never need it, and merging every segment's table at open cost ~0.5 s per 100k units."""

    def __init__(self, source: bytes | memoryview | dict):
        self._source = source
        self._tables: tuple[list[str], dict[str, str]] | None = None
        self._lock = threading.Lock()

    @classmethod
    def of(cls, table: dict[str, str]) -> SegmentStems:
        # Compared and picked in C: a build's table holds every distinct word of its file.
        same = list(map(eq, table, table.values()))
        return cls({"same": sorted(compress(table, same)), "changed": dict(compress(table.items(), map(not_, same)))})

    def table(self) -> dict[str, str]:
        same, changed = self._loaded()
        return {**dict(zip(same, same)), **changed}

    def dump(self) -> bytes:
        same, changed = self._loaded()
        return json.dumps({"same": same, "changed": changed}).encode()

    def _loaded(self) -> tuple[list[str], dict[str, str]]:
        with self._lock:
            if self._tables is None:
                try:
                    raw = self._source if isinstance(self._source, dict) else json.loads(bytes(self._source))
                    self._tables = (list(raw["same"]), dict(raw["changed"]))
                except (ValueError, KeyError, TypeError):
                    self._tables = ([], {})  # unreadable: the stemmer computes stems instead
            return self._tables

    def is_read(self) -> bool:
        return self._tables is not None

    def size(self) -> int:
        return 0 if isinstance(self._source, dict) else len(self._source)

    def lookup(self, word: str) -> str | None:
        same, changed = self._loaded()
        found = changed.get(word)
        if found is not None:
            return found
        at = bisect.bisect_left(same, word)
        return word if at < len(same) and same[at] == word else None


def unit_digest(unit: KnowledgeUnit) -> bytes:
    """A unit's content digest (16 bytes); view versions hash these, stored or computed. A
    segment build hashes the JSON it writes instead, which is the same bytes."""
    return hashlib.blake2b(unit.model_dump_json().encode(), digest_size=16).digest()
