"""Record vectors kept beside their memory file, so no ask re-encodes a whole conversation.

    <folder>/conversation-NAME.vectors      header, then one row per record: key (16 bytes) + vector

A record's key is a digest of its id and text, the header a digest of everything that changes a
vector (the HDC encoding options): a record edited by hand or a changed encoder misses, and is
encoded again, never matched to a stale vector. The file is a cache of what the JSON Lines file
implies: written only under that file's lock (rows appended after new records, rewritten with the
live records after a rewrite), read without trusting it (a short, foreign or oversized file is
simply a miss).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from core.infra.safe_io import atomic_write_bytes
from core.memory.journal import write_all
from core.memory.records import MemoryRecord
from core.retrieval.hdc.vectors import WORDS

_MAGIC = b"mrptui-memory-vectors-1\n"
_KEY_BYTES = 16
_ROW = np.dtype([("key", "u1", (_KEY_BYTES,)), ("vector", "<u8", (WORDS,))])


def side_path(path: Path) -> Path:
    return path.with_suffix(".vectors")


def header(options: Mapping[str, object]) -> bytes:
    """The magic line and a digest of the encoding options (32 bytes)."""
    return _MAGIC + hashlib.sha256(json.dumps(options, sort_keys=True, default=str).encode()).digest()


def key(record: MemoryRecord) -> bytes:
    return hashlib.blake2b(
        f"{record.id}\x1f{record.text}".encode("utf-8", "surrogatepass"), digest_size=_KEY_BYTES
    ).digest()


class SideFile:
    """The side file of one memory file as this process last read or wrote it: which keys it
    holds, so a write after an unchanged file appends only the new rows without reading it again."""

    def __init__(self, path: Path, head: bytes, max_rows: int):
        self.path, self.head, self.max_rows = path, head, max_rows
        self.keys: set[bytes] = set()
        self._seen: tuple[int, int, int] | None = None

    def current(self) -> bool:
        return self._seen is not None and self._seen == _signature(self.path)

    def read(self) -> dict[bytes, np.ndarray]:
        """The stored vectors by key; empty for anything that is not a complete file of this encoding."""
        rows = _load(self.path, self.head, self.max_rows)
        self._seen = _signature(self.path)
        # A file there that gave nothing (another encoding, over its bound) is replaced, never added to.
        self.keys = set(rows) if rows or self._seen is None or self._seen[1] <= len(self.head) else {b"stale"}
        return rows

    def save(self, live: Mapping[bytes, np.ndarray]) -> None:
        """Make the file hold exactly the `live` rows (the caller holds the memory file's lock):
        append the missing ones, or rewrite when it holds rows of records no longer there."""
        missing = [k for k in live if k not in self.keys]
        if not missing and len(self.keys) == len(live):
            return
        if self.keys - live.keys():
            atomic_write_bytes(self.path, self.head + _pack(live.items()), mode=0o600)
        else:
            _append(self.path, self.head, [(k, live[k]) for k in missing])
        self.keys, self._seen = set(live), _signature(self.path)


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info.st_ino, info.st_size, info.st_mtime_ns


def _load(path: Path, head: bytes, max_rows: int) -> dict[bytes, np.ndarray]:
    limit = len(head) + max_rows * _ROW.itemsize
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return {}
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit or handle.read(len(head)) != head:
            return {}
        body = handle.read(limit)
    rows = np.frombuffer(body[: len(body) - len(body) % _ROW.itemsize], dtype=_ROW)
    keys = rows["key"].tobytes()
    return dict(zip((keys[i : i + _KEY_BYTES] for i in range(0, len(keys), _KEY_BYTES)), np.array(rows["vector"])))


def _append(path: Path, head: bytes, rows: Iterable[tuple[bytes, np.ndarray]]) -> None:
    data = _pack(rows)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        start = os.fstat(fd).st_size
        if start < len(head):
            os.ftruncate(fd, 0)  # empty, or a header cut short by a killed writer
            data = head + data
        elif (start - len(head)) % _ROW.itemsize:
            os.ftruncate(fd, start - (start - len(head)) % _ROW.itemsize)  # a row cut short
        write_all(fd, data)
    finally:
        os.close(fd)


def _pack(rows: Iterable[tuple[bytes, np.ndarray]]) -> bytes:
    pairs = list(rows)
    table = np.zeros(len(pairs), dtype=_ROW)
    for index, (k, vector) in enumerate(pairs):
        table[index]["key"] = np.frombuffer(k, dtype=np.uint8)
        table[index]["vector"] = vector
    return table.tobytes()
