"""Reading cache files so that one truncated or rewritten under a live session is rebuilt, not a
SIGBUS.

A memory-mapped file that shrinks kills the process on the next read of a page past its new end
(SIGBUS, no message). So: a small file (at most `SMALL_BYTES`, which is most of a segment's
arrays) is read into memory; a larger one is mapped, its digest taken over the mapped bytes
(what is served is what was checked), and its (inode, size, mtime, ctime) recorded while the
mapping lives. `damaged()` names the live mappings whose file has since changed size or times
(once found, a mapping stays damaged until it is freed); each session checks it before each
question and rebuilds from the KB files once per damaged mapping (core/kernel/session.py). A
truncation between that check and a read would still kill the process, so each mapped file also
holds a read lease (core/infra/leases.py): a writer that would truncate it during a question
waits until the question ends, and the next one rebuilds.
"""

from __future__ import annotations

import io
import itertools
import math
import mmap
import os
import re
import threading
import weakref
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np

from core.infra import leases

SMALL_BYTES = 256 << 10
_HEADER_BYTES = 1 << 16
_PLAIN_BYTES = 256
# Bytes checked between releases of a mapped file's pages: a multiple of any page size.
_CHECK_CHUNK = 16 << 20
_LOCK = threading.Lock()
_KEYS = itertools.count(1)
# key of the mapping -> (path, (inode, size, mtime_ns, ctime_ns)), while the mapping lives.
_MAPPED: dict[int, tuple[str, tuple[int, int, int, int]]] = {}
# ids of live mappings found damaged, with their paths: another session may still hold them
# after the first one rebuilt (and removed the file's folder).
_DAMAGED: dict[int, str] = {}


class Damaged(ValueError):
    """A cache file that does not match its recorded digest."""


def read_checked(
    path: Path, check: Callable[[bytes | memoryview], bool] | None = None, *, release: bool = True
) -> bytes | memoryview:
    """The file's bytes (small: in memory; large: mapped and watched); `check` must accept them.
    A mapped file's pages are then released (`release_pages`) unless `release` is False."""
    with open(path, "rb") as handle:
        info = os.fstat(handle.fileno())
        if info.st_size <= SMALL_BYTES:
            data: bytes | memoryview = handle.read()
        else:
            # The lease first: from then on a writer waits, so the size mapped and checked holds.
            lease = os.dup(handle.fileno())
            key = _next_key()
            leases.hold(key, lease, str(path))
            info = os.fstat(handle.fileno())
            mapping = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
            _watch(mapping, key, str(path), info)
            data = memoryview(mapping)
    if check is not None and not check(data):
        raise Damaged(f"{Path(path).name} does not match its checksum")
    if release:
        release_pages(data)
    return data


def read_array(path: Path, check: Callable[[bytes | memoryview], bool] | None = None) -> np.ndarray:
    """`npy_array` of `read_checked`, the header read before the pages are released: read
    after, it would fault them back, and on a freshly written file one fault maps the file's
    whole large folio (2 MB on linux 6.18; at 1M units the HDC sets' headers kept 0.8 GB)."""
    data = read_checked(path, check, release=False)
    array = npy_array(data)
    release_pages(data)
    return array


def release_array(array: np.ndarray) -> None:
    """`release_pages` of the mapped file an array reads, if it reads one."""
    base: object = array
    while isinstance(base, np.ndarray):
        base = base.base
    if isinstance(base, memoryview):
        release_pages(base)


def release_pages(data: bytes | memoryview) -> None:
    """Let the process drop a mapped file's pages (the page cache keeps them): after a check
    read every page, a query pages in again only what it reads."""
    if isinstance(data, memoryview) and isinstance(data.obj, mmap.mmap):
        data.obj.madvise(mmap.MADV_DONTNEED)


def crc32_released(data: bytes | memoryview) -> int:
    """CRC-32 of a file's bytes, a mapped file's pages released after each chunk is read: at 1M
    units the merged BM25 index's keys are one 300 MB file, which a check in one piece made
    resident whole, on top of whatever the process held then."""
    if not (isinstance(data, memoryview) and isinstance(data.obj, mmap.mmap)):
        return zlib.crc32(data)
    crc = 0
    for start in range(0, len(data), _CHECK_CHUNK):
        crc = zlib.crc32(data[start : start + _CHECK_CHUNK], crc)
        data.obj.madvise(mmap.MADV_DONTNEED, start, min(_CHECK_CHUNK, len(data) - start))
    return crc


# The header numpy writes for a C-order array of a plain dtype (format 1.0): `npy_array` reads it
# without numpy's parser, whose `ast.literal_eval` cost ~65 µs per array (a warm `mrptui ask`
# opens ~140 of them). Anything else goes to numpy's parser.
_PLAIN_HEADER = re.compile(
    rb"\x93NUMPY\x01\x00(?P<size>..)\{'descr': '(?P<descr>[<>|][a-z]\d{1,2})', 'fortran_order': False, "
    rb"'shape': \((?P<shape>(?:\d+, )*(?:\d+,?)?)\), \} *\n",
    re.DOTALL,
)


def npy_array(data: bytes | memoryview) -> np.ndarray:
    """The array of an `.npy` file's bytes (C order, no pickles), without copying them."""
    plain = _PLAIN_HEADER.match(bytes(data[:_PLAIN_BYTES]))
    if plain is not None and 10 + int.from_bytes(plain["size"], "little") == plain.end():
        dtype = np.dtype(plain["descr"].decode())
        shape = tuple(int(n) for n in plain["shape"].split(b",") if n.strip())
        if not dtype.hasobject:
            return np.frombuffer(data, dtype=dtype, count=math.prod(shape), offset=plain.end()).reshape(shape)
    header = io.BytesIO(bytes(data[:_HEADER_BYTES]))
    version = np.lib.format.read_magic(header)
    read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, fortran, dtype = read_header(header)
    if fortran or dtype.hasobject:
        raise ValueError("not a C-order array of plain values")
    count = int(np.prod(shape, dtype=np.int64))
    return np.frombuffer(data, dtype=dtype, count=count, offset=header.tell()).reshape(shape)


def damaged() -> dict[int, str]:
    """Live mappings (by id) whose file was truncated or rewritten in place since it was mapped."""
    with _LOCK:
        watched = [(key, path, seen) for key, (path, seen) in _MAPPED.items() if key not in _DAMAGED]
    found = {}
    for key, path, seen in watched:
        try:
            info = os.stat(path)
        except OSError:
            continue  # removed or renamed: the mapping keeps the old inode, which nothing can reach
        if info.st_ino == seen[0] and _stamp(info) != seen:
            found[key] = path
    found.update(leases.broken())
    with _LOCK:
        _DAMAGED.update((key, path) for key, path in found.items() if key in _MAPPED)
        return dict(_DAMAGED)


def _next_key() -> int:
    return next(_KEYS)


def _watch(mapping: mmap.mmap, key: int, path: str, info: os.stat_result) -> None:
    with _LOCK:
        _MAPPED[key] = (path, _stamp(info))
    weakref.finalize(mapping, _unwatch, key)


def _unwatch(key: int) -> None:
    leases.release(key)
    with _LOCK:
        _MAPPED.pop(key, None)
        _DAMAGED.pop(key, None)


def _stamp(info: os.stat_result) -> tuple[int, int, int, int]:
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
