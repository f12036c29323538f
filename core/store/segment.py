"""One KB file's segment: its units, diagnostics, token ids, field lengths and stems.

On disk a segment is a folder of a few files: `units.json`, `diagnostics.json`, `words.json` (the
segment's vocabulary), `stems.json`, and `terms.npy` / `lengths.npy` (memory-mapped on open), plus
`meta.json` with the format version, key, shapes and a SHA-256 of every other file. A folder is
written under a temp name and renamed into place, and `load` checks every checksum and shape, so
a truncated, corrupt or foreign segment is refused (`SegmentError`) rather than half used.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pydantic import TypeAdapter

from core.cnl import read_file
from core.diagnostics import Diagnostic
from core.retrieval.bm25 import FIELDS, field_texts, field_tokens
from core.store.codec import dump_units, load_units
from core.text import stem_table
from core.units import KnowledgeUnit

FORMAT_VERSION = 2
_DIAGNOSTICS = TypeAdapter(list[Diagnostic])
_ARRAYS = ("terms", "lengths", "digests")


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
    units: tuple[KnowledgeUnit, ...]
    diagnostics: tuple[Diagnostic, ...]
    words: tuple[str, ...]
    terms: np.ndarray
    lengths: np.ndarray
    stems: dict[str, str]
    digests: np.ndarray  # uint8 [n, 16]: `unit_digest` of each unit, for view versions


    @classmethod
    def build(cls, file: Path, key: str) -> Segment:
        units, problems = read_file(file)
        vocab: dict[str, int] = {}
        flat: list[int] = []
        lengths: list[int] = []
        for unit in units:
            for tokens in field_tokens(unit):
                flat.extend(vocab.setdefault(token, len(vocab)) for token in tokens)
                lengths.append(len(tokens))
        return cls(
            file=str(file),
            key=key,
            units=tuple(units),
            diagnostics=tuple(problems),
            words=tuple(vocab),
            terms=np.array(flat, dtype=np.int32),
            lengths=np.array(lengths, dtype=np.int32).reshape(len(units), len(FIELDS)),
            stems=stem_table(text for unit in units for text in field_texts(unit)),
            digests=np.frombuffer(b"".join(map(unit_digest, units)), dtype=np.uint8).reshape(len(units), 16),
        )

    def save(self, parent: Path) -> Path:
        """Write the segment's files into a new temp folder under `parent`; returns that folder."""
        parent.mkdir(parents=True, exist_ok=True)
        folder = Path(tempfile.mkdtemp(prefix=f".tmp-{self.key}-", dir=parent))
        blobs = {
            "units.json": dump_units(self.units),
            "diagnostics.json": _DIAGNOSTICS.dump_json(list(self.diagnostics)),
            "words.json": json.dumps(self.words).encode(),
            "stems.json": json.dumps(self.stems).encode(),
        }
        for name in _ARRAYS:
            np.save(folder / f"{name}.npy", getattr(self, name))
        for name, data in blobs.items():
            (folder / name).write_bytes(data)
        checksums = {name: sha256_of(folder / name) for name in [*blobs, *(f"{a}.npy" for a in _ARRAYS)]}
        meta = {
            "format": FORMAT_VERSION,
            "key": self.key,
            "file": self.file,
            "units": len(self.units),
            "tokens": len(self.terms),
            "words": len(self.words),
            "checksums": checksums,
        }
        # meta.json last: a folder without it is incomplete and never loads.
        (folder / "meta.json").write_text(json.dumps(meta))
        return folder

    @classmethod
    def load(cls, folder: Path, key: str) -> Segment:
        """Read and verify a stored segment; raises SegmentError when it cannot be trusted."""
        try:
            meta = json.loads((folder / "meta.json").read_bytes())
            if meta.get("format") != FORMAT_VERSION or meta.get("key") != key:
                raise SegmentError(f"format {meta.get('format')!r}, expected {FORMAT_VERSION}")
            for name, digest in meta["checksums"].items():
                if sha256_of(folder / name) != digest:
                    raise SegmentError(f"{name} does not match its checksum")
            units = load_units((folder / "units.json").read_bytes())
            words = tuple(json.loads((folder / "words.json").read_bytes()))
            terms = np.load(folder / "terms.npy", mmap_mode="r")
            lengths = np.load(folder / "lengths.npy", mmap_mode="r")
            digests = np.load(folder / "digests.npy", mmap_mode="r")
            segment = cls(
                file=meta["file"],
                key=key,
                units=units,
                diagnostics=tuple(_DIAGNOSTICS.validate_json((folder / "diagnostics.json").read_bytes())),
                words=words,
                terms=terms,
                lengths=lengths,
                stems=json.loads((folder / "stems.json").read_bytes()),
                digests=digests,
            )
        except SegmentError:
            raise
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise SegmentError(f"unreadable: {exc}") from exc
        segment.check_shape(meta)
        return segment

    def check_shape(self, meta: dict) -> None:
        expected = (len(self.units), len(FIELDS))
        if (
            len(self.units) != meta["units"]
            or self.lengths.shape != expected
            or self.digests.shape != (len(self.units), 16)
            or self.terms.dtype != np.int32
            or self.lengths.dtype != np.int32
            or len(self.terms) != int(self.lengths.sum())
            or len(self.terms) != meta["tokens"]
            or len(self.words) != meta["words"]
            or (len(self.terms) and (int(self.terms.min()) < 0 or int(self.terms.max()) >= len(self.words)))
        ):
            raise SegmentError("array shapes do not match the segment's units")


def unit_digest(unit: KnowledgeUnit) -> bytes:
    """A unit's content digest (16 bytes); view versions hash these, stored or computed."""
    return hashlib.blake2b(unit.model_dump_json().encode(), digest_size=16).digest()


def sha256_of(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()
