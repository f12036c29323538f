"""The cache's trust boundary: who may write it, and how its files are written and checked.

The cache holds what a caller's view is computed from (each unit's permission class) and the text
of restricted units, so it is trusted only as far as its root folder is:

- `refusal` names why a root must not be used: not a folder, owned by another user, writable
  by group or others, or holding a symbolic link in its first two levels (the folders every
  command reads: `segments/<file>`, `views/<view>`, `sources`, `nlp`, `tags`, `tmp/<writer>`).
  Such a cache is neither read nor written (the store turns itself off with one warning). A root
  of ours that others may read or enter is narrowed to 0700.
- `linked_below` checks a deeper folder the same way when a command first uses it (the store:
  the segments of one KB file), so a command's check costs what it reads, not the whole cache
  (17,000 entries took 0.3 s a command on a developer's machine).
- Everything the store creates is a 0700 folder (`private_dirs`) or a 0600 file (`write_private`),
  whatever the umask, so restricted text and vocabulary are never readable by others.
- `Mac`: every segment file's keyed BLAKE2b digest is recorded in its `meta.json` and checked on
  open, so a file rewritten by anything but the store (a tool that edits a permission column, a
  cache copied from another user or machine, a damaged disk) is rebuilt, never served. The key is
  `<root>/mac.key` (32 random bytes, 0600), made on first use.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

KEY_FILE = "mac.key"
KEY_BYTES = 32
DIGEST_BYTES = 16
_FILE_MODE = 0o600
_DIR_MODE = 0o700
# Entries below a root that `refusal` checks for links; a cache with more is refused unchecked.
MAX_CHECKED_ENTRIES = 1_000_000
# Levels below the root that `refusal` checks; deeper folders are checked as they are used.
_ROOT_DEPTH = 2


def refusal(root: Path) -> str | None:
    """Why `root` may not hold the cache (None: it may; created 0700 when missing)."""
    try:
        if not os.path.exists(root):
            private_dirs(root, top=None)
        info = os.stat(root)
    except OSError as exc:
        return f"cannot use the index cache at {root} ({exc.strerror or exc}); running without it"
    if not stat.S_ISDIR(info.st_mode):
        return f"the index cache at {root} is not a folder; running without it"
    if info.st_uid != os.geteuid():
        return f"refusing the index cache at {root}: it is owned by uid {info.st_uid}, not by you (uid {os.geteuid()}); running without it"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"refusing the index cache at {root}: it is writable by group or others (mode {stat.S_IMODE(info.st_mode):o}); running without it"
    link = linked_below(root, depth=_ROOT_DEPTH)
    if link is not None:
        return f"refusing the index cache at {root}: {link}; running without it"
    if info.st_mode & 0o077:
        try:
            # Older versions made it 0755: then nothing inside stays readable by others. A
            # read-only root stays read-only.
            os.chmod(root, stat.S_IMODE(info.st_mode) & 0o700)
        except OSError as exc:
            return f"cannot make the index cache at {root} private ({exc.strerror or exc}); running without it"
    return None


def linked_below(folder: Path, depth: int | None = None) -> str | None:
    """Why an entry below `folder` (down to `depth` levels, None: all) makes the cache unusable:
    a symbolic link (a planted `segments` link would have the store read and write wherever it
    points), or more entries than are checked."""
    pending, seen = [(str(folder), 1)], 0
    while pending:
        path, level = pending.pop()
        try:
            entries = list(os.scandir(path))
        except OSError:
            continue  # an unreadable folder is the store's to report when it uses it
        for entry in entries:
            seen += 1
            if seen > MAX_CHECKED_ENTRIES:
                return f"it holds more than {MAX_CHECKED_ENTRIES:,} entries (MAX_CHECKED_ENTRIES), too many to check for links"
            if entry.is_symlink():
                return f"{entry.path} is a symbolic link"
            if entry.is_dir(follow_symlinks=False) and (depth is None or level < depth):
                pending.append((entry.path, level + 1))
    return None


def private_dirs(path: Path, top: Path | None) -> None:
    """Create `path` and its missing parents below `top` (all of them when None) as 0700 folders."""
    path = Path(path)
    missing = []
    while not path.is_dir() and path != top and path.parent != path:
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, _DIR_MODE)
        except FileExistsError:
            if not folder.is_dir():
                raise
        else:
            os.chmod(folder, _DIR_MODE)  # mkdir's mode passes through the umask


def write_private(path: Path, chunks: Iterable[bytes | memoryview], digest=None) -> None:
    """Write a new 0600 file (replacing one there), feeding each chunk to `digest` too."""
    with open_private(path) as out:
        for chunk in chunks:
            out.write(chunk)
            if digest is not None:
                digest.update(chunk)


@contextmanager
def open_private(path: Path) -> Iterator[BinaryIO]:
    """A new 0600 file (replacing one there) open for writing, whatever the umask."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, _FILE_MODE)
    with os.fdopen(fd, "wb") as out:
        os.fchmod(fd, _FILE_MODE)
        yield out


class Mac:
    """Keyed BLAKE2b digests (hex) of cache files, under one cache root's key."""

    def __init__(self, key: bytes):
        self._key = key

    @classmethod
    def of_root(cls, root: Path) -> Mac:
        """The root's key, made (0600, published whole by a link) by the first process to need it."""
        path = Path(root) / KEY_FILE
        for _ in range(2):
            try:
                key = _read_key(path)
            except FileNotFoundError:
                _make_key(path)
                continue
            return cls(key)
        return cls(_read_key(path))

    def new(self) -> hashlib.blake2b:
        return hashlib.blake2b(key=self._key, digest_size=DIGEST_BYTES)

    def of_bytes(self, data: bytes | memoryview) -> str:
        digest = self.new()
        digest.update(data)
        return digest.hexdigest()


def _read_key(path: Path) -> bytes:
    """The key file's bytes; a key that is not ours, not private or not whole is replaced (every
    segment made under it is then rebuilt): it may have been written by someone else."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        key = handle.read(KEY_BYTES + 1)
    if (
        stat.S_ISREG(info.st_mode)
        and info.st_uid == os.geteuid()
        and stat.S_IMODE(info.st_mode) == _FILE_MODE
        and len(key) == KEY_BYTES
    ):
        return key
    os.unlink(path)
    raise FileNotFoundError(path)


def _make_key(path: Path) -> None:
    temp = path.with_name(f".{KEY_FILE}.{secrets.token_hex(8)}.tmp")
    write_private(temp, [secrets.token_bytes(KEY_BYTES)])
    try:
        os.link(temp, path)  # fails if another process made it first: then theirs is the key
    except FileExistsError:
        pass
    finally:
        temp.unlink(missing_ok=True)
