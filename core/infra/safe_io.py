"""Reading and writing user files without hanging, following links or losing what is there.

Reading: `open_regular` refuses anything but a regular file (a FIFO would block `open()` forever,
a device never ends) and anything over a size cap, before reading a byte. Links are followed
(KB folders may link to shared notes); a link loop is refused like any other unreadable path.

Writing: `atomic_write_text` / `atomic_write_bytes` write a temporary file made with
`tempfile.mkstemp` in the target's own folder, then `os.replace` it over the target, so the
target is either the old file or the complete new one. They refuse (raising `UnsafePath`,
nothing written) a directory, a FIFO/device/socket, a symbolic link (we never write through a
link: the user names the real file), a missing or unwritable folder, and any path the caller's
`protected` test claims (the KB and config files a session reads). A failed write removes its
temporary file. Given `ours` (a test of an existing file's bytes: does it carry the writer's own
marker?), they also refuse to replace a non-empty file the tool did not write: an export or run
file path typed over a user's own file never loses it.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO

Protected = Callable[[Path], bool]
# Whether an existing file is one the tool wrote, from its first and last bytes (`Marked`).
Ours = Callable[["Marked"], bool]
_MARK_PROBE_BYTES = 4096


class UnsafePath(OSError):
    """A path that cannot be read or written safely: `str()` is "<path>: <reason>"."""

    def __init__(self, path: Path | str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path, self.reason = str(path), reason


class FileTooLarge(UnsafePath):
    def __init__(self, path: Path | str, size: int, limit: int):
        super().__init__(path, f"file too large ({megabytes(size)} > {megabytes(limit)} cap)")
        self.size, self.limit = size, limit


def megabytes(size: int) -> str:
    """A size for messages: bytes when small, else MB (decimal, one place unless whole)."""
    if size < 100_000:
        return f"{size} bytes"
    return f"{size // 1_000_000} MB" if size % 1_000_000 == 0 else f"{size / 1_000_000:.1f} MB"


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def open_regular(path: Path, max_bytes: int) -> BinaryIO:
    """A binary handle on a regular file of at most `max_bytes`; `UnsafePath` otherwise.

    The path is stat-ed before it is opened, so a FIFO or device is refused without `open()`
    (which would block); the open is non-blocking and re-checked in case the path was swapped.
    """
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise UnsafePath(path, f"is {_kind(info.st_mode)}, not a regular file; skipped")
    if info.st_size > max_bytes:
        raise FileTooLarge(path, info.st_size, max_bytes)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise UnsafePath(path, f"is {_kind(mode)}, not a regular file; skipped")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most `max_bytes` (also if it grows while being read)."""
    with open_regular(path, max_bytes) as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise FileTooLarge(path, len(data), max_bytes)
    return data


class Marked:
    """The first and last few KB of an existing file: where the tool's markers are."""

    def __init__(self, head: bytes, tail: bytes):
        self.head, self.tail = head, tail


def _marked(path: Path, size: int) -> Marked | None:
    try:
        with open(path, "rb") as handle:
            head = handle.read(_MARK_PROBE_BYTES)
            if size <= _MARK_PROBE_BYTES:
                return Marked(head, head)
            handle.seek(-_MARK_PROBE_BYTES, os.SEEK_END)
            return Marked(head, handle.read())
    except OSError:
        return None


def check_target(path: Path, protected: Protected | None = None, ours: Ours | None = None) -> None:
    """Raise `UnsafePath` unless `path` may be created or replaced by an atomic write; with `ours`,
    an existing non-empty file is replaced only when `ours` finds the writer's marker in it.

    Callers check before doing the work whose result they will write, so a bad path fails fast.
    """
    path = Path(path)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise UnsafePath(path, f"cannot write here: {exc.strerror or exc}") from None
    if info is not None and stat.S_ISLNK(info.st_mode):
        raise UnsafePath(
            path, f"is a symbolic link (to {os.readlink(path)}); name the file itself, links are never written through"
        )
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise UnsafePath(path, f"is {_kind(info.st_mode)}; choose a file path")
    if protected is not None and protected(path):
        raise UnsafePath(path, "is a KB or config file this session reads; choose another path")
    if info is not None and ours is not None and info.st_size:
        marked = _marked(path, info.st_size)
        if marked is None or not ours(marked):
            raise UnsafePath(path, "exists and was not written by mrptui; choose another path, or remove it first")
    folder = path.parent
    if not folder.is_dir():
        raise UnsafePath(path, f"folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UnsafePath(path, f"folder {folder} is not writable")


def atomic_write_bytes(
    path: Path,
    chunks: bytes | Iterable[bytes],
    protected: Protected | None = None,
    mode: int | None = None,
    ours: Ours | None = None,
) -> None:
    """Replace `path` with `chunks` (one bytes object or an iterable, written as they come) atomically.
    The file gets `mode` when given (0o600 for what only its owner may read), else `mode_for`;
    `ours`: see `check_target`."""
    path = Path(path)
    check_target(path, protected, ours)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise UnsafePath(path, f"could not write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as out:
            os.fchmod(out.fileno(), mode_for(path) if mode is None else mode)
            for chunk in [chunks] if isinstance(chunks, bytes) else chunks:
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        # Checked again just before the swap: the path may have become a link, a folder or a
        # user's file meanwhile.
        check_target(path, protected, ours)
        os.replace(tmp, path)
    except BaseException as exc:
        _remove(tmp)
        if isinstance(exc, OSError) and not isinstance(exc, UnsafePath):
            raise UnsafePath(path, f"could not write: {exc.strerror or exc}") from None
        raise


def atomic_write_text(
    path: Path,
    text: str | Iterable[str],
    protected: Protected | None = None,
    encoding: str = "utf-8",
    mode: int | None = None,
    ours: Ours | None = None,
) -> None:
    """`atomic_write_bytes` for text (one string or an iterable of pieces), encoded as `encoding`."""
    chunks = text.encode(encoding) if isinstance(text, str) else (piece.encode(encoding) for piece in text)
    atomic_write_bytes(path, chunks, protected, mode, ours)


def mode_for(path: Path) -> int:
    """An existing file keeps its permissions; a new one gets what `open()` would give it."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    # Read, not set: os.umask() changes the process-wide mask, which threads would race on.
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


def _remove(tmp: str) -> None:
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
