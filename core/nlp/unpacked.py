"""The shipped NLP data unpacked once per install, so later processes skip unpacking it.

Every answering `mrptui ask` tags, so it loads the tagger's weights (gzipped JSON: ~0.11 CPU s
to decompress and parse) and the lexicon (gzipped arrays: ~0.06 s to decompress). The first
process stores what it unpacked (the weights as a table read in place,
core/nlp/weights_table.py; the lexicon decompressed); later ones read that back. The shipped
data is stored beside itself, in `core/nlp/data/unpacked/`, as Python writes bytecode beside a
module: every KB cache, `--cache-dir` and `--no-cache` run of the install then finds it, and a
first question over a new cache no longer pays the unpacking (issue 41, `first_run`). Where the
install cannot be written (a system-wide install) or for any other source, it goes to the index
cache's `<cache>/nlp/` as before. A stored file is named after its source's path, size and
modification time, so new data (another install) gets a new file; it is 0600 in 0700 folders
whose owner is the user (core/store/private.py's `refusal`, as for the cache). In the cache its
keyed digest (the cache's `mac.key`) is checked on every read, so a file the store did not write
is never used; in the install's folder its CRC-32 (`_digest_for` says why). Without a usable
folder, or when the stored file is missing or fails its check, the source is unpacked as before
(and stored again).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from core.store.contents import NLP as FOLDER
from core.store.contents import cache_refusal
from core.store.location import cache_root
from core.store.private import Mac, private_dirs, refusal, write_private

FORMAT = "mrptui-unpacked/1"
SHIPPED = Path(__file__).resolve().parent / "data"
# Where the shipped data is unpacked (None: only into the cache). Not shipped in the wheel
# (pyproject's package-data), ignored by git in a checkout.
INSTALL_ROOT: Path | None = SHIPPED / "unpacked"
T = TypeVar("T")
# The folder the last opened session caches into (`use_cache_of`); unset: the environment's.
_session_root: tuple[Path | None, ...] = ()


def use_cache_of(root: Path | None) -> None:
    """Use the cache at `root` (None: none) from now on, not the environment's: a session opened
    with `--no-cache` or `--cache-dir` must not have its NLP data cached in another cache (the
    install's own folder is no cache: the shipped data goes there whatever the session). The
    data is loaded once per process, so the last opened session decides."""
    global _session_root
    _session_root = (root,)


def load_unpacked(
    source: Path,
    unpack: Callable[[bytes], T],
    dump: Callable[[T], bytes],
    restore: Callable[[bytes], T],
    part: str = "",
) -> T:
    """`unpack(source's bytes)`, or `restore` of what an earlier process stored for the same
    source (`dump` of its value). `restore` raising ValueError, EOFError or TypeError counts as
    nothing stored. A `part` name stores one more value of the same source in a file of its own,
    read only by the callers that need it."""
    place = _place(source, part)
    if place is not None:
        stored = _read(place[1], _digest_for(place[0]))
        if stored is not None:
            try:
                return restore(stored)
            except (ValueError, EOFError, TypeError):
                pass
    value = unpack(source.read_bytes())
    if place is not None:
        _store(place[1], _digest_for(place[0]), dump(value))
    return value


def _place(source: Path, part: str) -> tuple[Path, Path] | None:
    """(root, stored file): beside the shipped data when its folder is usable (once per
    install), else in the cache (None: neither)."""
    for root, refused in ((_install_root(source), refusal), (_cache_root(), cache_refusal)):
        if root is not None and refused(root) is None:
            path = _path_for(root, source, part)
            return None if path is None else (root, path)
    return None


def _install_root(source: Path) -> Path | None:
    return INSTALL_ROOT if INSTALL_ROOT is not None and source.parent == SHIPPED else None


def _cache_root() -> Path | None:
    return _session_root[0] if _session_root else cache_root()


Digest = Callable[[bytes], str]


def _digest_for(root: Path) -> Digest:
    """The cache's keyed digest, or in the install's folder a CRC-32: who can write there can
    rewrite the code beside it, so a key guards nothing there, as none guards Python's bytecode;
    the CRC still catches a damaged file. Hashing the ~11 MB with BLAKE2b was ~8% of a warm
    `ask`'s instructions (0.14 G of 1.8 G, cachegrind)."""
    if root == INSTALL_ROOT:
        return lambda body: f"crc32:{zlib.crc32(body):08x}"
    return Mac.of_root(root).of_bytes


def _path_for(root: Path, source: Path, part: str) -> Path | None:
    try:
        info = source.stat()
    except OSError:
        return None
    where = str(source.resolve())
    version = f"{where}\0{info.st_size}\0{info.st_mtime_ns}"
    stem = f"{source.name}.{part}" if part else source.name
    return root / FOLDER / f"{stem}-{_digest(where)}-{_digest(version)}.bin"


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def _read(path: Path, digest: Digest) -> bytes | None:
    try:
        with path.open("rb") as stream:
            # The body read on its own: slicing it off the whole file would copy megabytes.
            first, body = stream.readline(), stream.read()
    except OSError:
        return None
    try:
        header = json.loads(first)
        if header.get("format") != FORMAT or digest(body) != header.get("mac"):
            return None
    except (ValueError, AttributeError):
        return None
    return body


# Stored files kept per source name, one per install (the newest installs): a few installs
# sharing one cache (a checkout and a clean clone, two worktrees) must not evict each other's
# file on every run. An install's older data (an upgrade) is removed at once.
KEEP_PER_SOURCE = 4


def _store(path: Path, digest: Digest, body: bytes) -> None:
    """Best effort: a cache that cannot be written only means unpacking again next time. The
    same install's earlier files are removed, and past `KEEP_PER_SOURCE` installs of a source
    of this name, the oldest's."""
    try:
        private_dirs(path.parent, path.parent.parent)
        temp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            header = json.dumps({"format": FORMAT, "mac": digest(body)}).encode()
            write_private(temp, [header, b"\n", body])
            os.replace(temp, path)
        finally:
            temp.unlink(missing_ok=True)
        _evict(path)
    except OSError:
        pass


def _evict(path: Path) -> None:
    def age(other: Path) -> float:
        try:
            return -other.stat().st_mtime
        except OSError:
            return 0.0

    install = path.name.rsplit("-", 1)[0]
    for older in path.parent.glob(f"{install}-*.bin"):
        if older != path:
            older.unlink(missing_ok=True)
    others = sorted(path.parent.glob(f"{install.rsplit('-', 1)[0]}-*.bin"), key=age)
    for other in [p for p in others if p != path][KEEP_PER_SOURCE - 1 :]:
        other.unlink(missing_ok=True)
