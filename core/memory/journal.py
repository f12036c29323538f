"""One memory file kept like a database's log: what several mrptui processes may share safely.

A file is JSON Lines of records and tombstones, read by replaying it in order: a record line adds
a record, a tombstone removes the records it names (`forget`) or every record before it (`clear`).
Every change happens under an exclusive `fcntl.flock` on the file's lock file (`.NAME.lock` beside
it) and starts by re-reading the file, so a change is always made to what is on disk now, never to
a copy a process loaded minutes ago:

- a new record or a tombstone is *appended* (one write, fsync-ed; a short or failed write is cut
  back, so the file never holds half a line of ours);
- a rewrite (dropping what tombstones removed, what no longer validates, the oldest records past
  `maxRecords`/`maxFileBytes`, turns a summary replaced) writes a temporary file and renames it
  over the file, under the same lock.

A forget or clear is appended before the rewrite that purges the text, so it holds even when the
rewrite cannot be made (a full disk) or is killed. A file over `maxFileBytes` is read from its
newest end: the oldest records are the ones left out, never all. Temporary files of a rewrite
killed half-way are removed by the next process that holds the lock (no live writer owns them
then). Nothing here ever chmods: a file or folder its owner made read-only is refused, not forced.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import stat
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, ValidationError

from core.infra.config import MemoryConfig
from core.infra.diagnostics import Code, Diagnostic, Severity
from core.infra.safe_io import UnsafePath, atomic_write_bytes
from core.memory.records import MemoryRecord

# How long a change waits for another process's lock before giving up (a stopped process may hold it).
LOCK_WAIT_SECONDS = 10.0
_LOCK_POLL_SECONDS = 0.005


class MemoryFileError(Exception):
    """A memory file that cannot be read or written; `str()` is one line naming the file and why."""

    def __init__(self, path: Path, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path, self.reason = path, reason


class Tombstone(BaseModel):
    """`forget`: these record ids are gone; `clear`: every record written before this line is gone."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tombstone: Literal[True] = True
    ts: float = 0.0
    forget: tuple[str, ...] = ()
    clear: bool = False


def _entry(line: str) -> MemoryRecord | Tombstone:
    """A line as a record or a tombstone (the key "tombstone" tells them apart)."""
    if '"tombstone"' in line:
        try:
            return Tombstone.model_validate_json(line)
        except ValidationError:
            pass  # a record that merely says "tombstone" somewhere
    return MemoryRecord.model_validate_json(line)


@dataclass
class _Fold:
    """The live records of the lines read so far, by id, and what the lines held that is not live."""

    live: dict[str, MemoryRecord] = field(default_factory=dict)
    dropped: int = 0
    problems: list[Diagnostic] = field(default_factory=list)

    def add(self, entry: MemoryRecord | Tombstone, caller: str) -> None:
        if isinstance(entry, Tombstone):
            gone = list(self.live) if entry.clear else [i for i in entry.forget if i in self.live]
            for record_id in gone:
                del self.live[record_id]
            self.dropped += 1 + len(gone)
        elif entry.caller != caller:
            self.dropped += 1  # a record filed under another caller's folder is never read as this caller's
        else:
            self.dropped += entry.id in self.live
            self.live[entry.id] = entry

    def copy(self) -> _Fold:
        return _Fold(dict(self.live), self.dropped, list(self.problems))


@dataclass
class Replay:
    """What a file holds now: its live records (oldest first), the problems found reading it, and
    how many lines a rewrite would drop (tombstones, removed or malformed records, the oldest past
    the bounds)."""

    records: list[MemoryRecord] = field(default_factory=list)
    problems: list[Diagnostic] = field(default_factory=list)
    dead: int = 0
    size: int = 0
    fold: _Fold | None = None
    # Bytes of an unfinished last line left out (a writer killed mid-append), still in the file.
    unfinished: int = 0


class Change(Protocol):
    """A change in progress on a log: the records as they are now, and how to change them
    (`Transaction` on a file, `EphemeralTransaction` in memory)."""

    @property
    def replay(self) -> Replay: ...

    @property
    def records(self) -> list[MemoryRecord]: ...

    def append(self, records: Sequence[MemoryRecord] = (), tombstone: Tombstone | None = None) -> None: ...

    def rewrite(self, records: Iterable[MemoryRecord] | None = None) -> None: ...

    def needs_rewrite(self) -> bool: ...


class Journal:
    """The log of one memory file (`path`) of one caller (`caller`: records of any other are dead)."""

    def __init__(self, path: Path, caller: str, config: MemoryConfig):
        self.path, self.caller, self.config = Path(path), caller, config
        self.lock_path = self.path.with_name(f".{self.path.name}.lock")
        self._cached: tuple[tuple[int, int, int], Replay] | None = None

    def read(self) -> Replay:
        """The file replayed (empty when it does not exist yet); `MemoryFileError` when it cannot
        be read. Never waits for a writer; while no process holds the lock, sweeps temporary files."""
        with self._lock(wait=False) as held:
            if held:
                self._sweep()
            return self._replay()

    @contextmanager
    def change(self) -> Iterator[Transaction]:
        """An exclusive transaction on the file as it is now (re-read under the lock)."""
        writable_folder(self.path.parent)
        with self._lock(wait=True):
            self._sweep()
            yield Transaction(self, self._replay(repair=True))

    # reading

    def _replay(self, repair: bool = False) -> Replay:
        info = self._stat()
        if info is None:
            return Replay()
        cached = self._cached
        # A read left a dead writer's unfinished line in place; a change must cut it before it
        # appends, or the new line would be glued to it and both lost.
        if cached is not None and cached[0] == (info.st_ino, info.st_size, info.st_mtime_ns):
            if not (repair and cached[1].unfinished):
                return cached[1]
        data, info, unfinished = self._read_tail(repair)
        replay = self._parse(data, info.st_size)
        replay.unfinished = unfinished
        # Keyed by what was read (a rename between the stat and the open is read as the new file).
        self._cached = ((info.st_ino, info.st_size, info.st_mtime_ns), replay)
        return replay

    def _stat(self) -> os.stat_result | None:
        try:
            info = os.lstat(self.path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise MemoryFileError(self.path, f"cannot be read ({exc.strerror or exc})") from None
        if stat.S_ISLNK(info.st_mode):
            raise MemoryFileError(self.path, "is a symbolic link; memory files are never read or written through links")
        if not stat.S_ISREG(info.st_mode):
            raise MemoryFileError(self.path, f"is {_kind(info.st_mode)}, not a memory file")
        if not info.st_mode & stat.S_IRUSR:
            raise MemoryFileError(self.path, f"cannot be read (mode {stat.S_IMODE(info.st_mode):04o})")
        return info

    def _read_tail(self, repair: bool) -> tuple[bytes, os.stat_result, int]:
        """The file, or its newest `maxFileBytes` when larger, what was read, and the length of an
        unfinished last line (a writer killed mid-append, or one appending now): it is left out,
        and cut off when `repair` (we hold the lock, so its writer is dead)."""
        cap = self.config.max_file_bytes
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as exc:
            raise MemoryFileError(self.path, f"cannot be read ({exc.strerror or exc})") from None
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise MemoryFileError(self.path, "changed into something that is not a file while being read")
            size = info.st_size
            handle.seek(max(0, size - cap))
            data = handle.read(cap)
        if size > cap:
            data = data[data.find(b"\n") + 1 :]  # the first line is cut: it starts before the window
        end = data.rfind(b"\n") + 1
        unfinished = len(data) - end
        if unfinished and repair and size <= cap and self._cut(end):
            unfinished = 0
        return data[:end], info, unfinished

    def _cut(self, length: int) -> bool:
        try:
            os.truncate(self.path, length)
        except OSError:
            return False  # left for the rewrite; the unfinished line is never read
        return True

    def _parse(self, data: bytes, size: int) -> Replay:
        fold = _Fold()
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), start=1):
            if not line.strip():
                fold.dropped += 1
                continue
            try:
                entry = _entry(line)
            except (ValidationError, ValueError) as exc:
                message = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
                fold.problems.append(self._problem(Code.MALFORMED_LINE, f"memory record dropped: {message}", number))
                fold.dropped += 1
                continue
            fold.add(entry, self.caller)
        return self._finish(fold, size)

    def _finish(self, fold: _Fold, size: int) -> Replay:
        replay = Replay(problems=list(fold.problems), dead=fold.dropped, size=size, fold=fold)
        records = sorted(fold.live.values(), key=lambda r: (r.ts, r.id))
        if size > self.config.max_file_bytes:
            replay.problems.append(
                self._problem(
                    Code.FILE_TOO_LARGE,
                    f"memory file over maxFileBytes ({size} > {self.config.max_file_bytes} bytes): "
                    f"its oldest records are left out",
                    1,
                    Severity.WARNING,
                )
            )
            replay.dead += 1
        replay.dead += max(0, len(records) - self.config.max_records)
        replay.records = records[-self.config.max_records :]
        return replay

    def _extended(self, before: Replay, entries: Sequence[MemoryRecord | Tombstone], fd: int) -> Replay:
        """The replay after we appended `entries` (holding the lock): no need to read the file again."""
        fold = before.fold.copy() if before.fold is not None else _Fold()
        for entry in entries:
            fold.add(entry, self.caller)
        info = os.fstat(fd)
        replay = self._finish(fold, info.st_size)
        self._cached = ((info.st_ino, info.st_size, info.st_mtime_ns), replay)
        return replay

    def _problem(self, code: Code, message: str, line: int, severity: Severity = Severity.ERROR) -> Diagnostic:
        return Diagnostic(code=code, message=message, file=str(self.path), line=line, severity=severity)

    # locking and housekeeping

    @contextmanager
    def _lock(self, wait: bool) -> Iterator[bool]:
        """Hold the file's exclusive lock, waiting for it (`wait`, a change: `MemoryFileError` when
        it cannot be had), or only if it is free at once (a read); yields whether it is held.

        A read never waits and never needs the lock: appends are whole lines (an unfinished last
        line is never read) and rewrites are renames. It takes a free lock only to sweep."""
        # A reader creates no lock file (no lock file: no writer ever, nothing to sweep), unless a
        # killed writer of an older mrptui, which took no lock, left temporary files behind.
        create = os.O_CREAT if wait or leftover_temps(self.path) else 0
        try:
            fd = os.open(self.lock_path, os.O_RDWR | create | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            if wait:
                raise MemoryFileError(self.lock_path, f"lock file cannot be opened ({exc.strerror or exc})") from None
            yield False
            return
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                if wait:
                    raise MemoryFileError(self.lock_path, "lock file is not a regular file")
                yield False
                return
            if wait:
                self._wait(fd)
            yield wait or _try_lock(fd)
        finally:
            os.close(fd)  # releases the lock

    def _wait(self, fd: int) -> None:
        deadline = time.monotonic() + LOCK_WAIT_SECONDS
        while not _try_lock(fd):
            if time.monotonic() > deadline:
                raise MemoryFileError(
                    self.path, f"busy: another process held its lock for over {LOCK_WAIT_SECONDS:g} s"
                )
            time.sleep(_LOCK_POLL_SECONDS)

    def _sweep(self) -> None:
        """Remove temporary files of this file's rewrites: under the exclusive lock, none is live."""
        for path in leftover_temps(self.path):
            try:
                path.unlink()
            except OSError:
                pass


class Transaction:
    """A change in progress: `records` is the file as it is now; append, then rewrite if needed."""

    def __init__(self, journal: Journal, replay: Replay):
        self.journal, self.replay = journal, replay

    @property
    def records(self) -> list[MemoryRecord]:
        return self.replay.records

    def append(self, records: Sequence[MemoryRecord] = (), tombstone: Tombstone | None = None) -> None:
        """Add lines to the end of the file (a tombstone first); the replay follows."""
        entries: list[MemoryRecord | Tombstone] = [*([tombstone] if tombstone is not None else []), *records]
        if not entries:
            return
        lines = [entry.model_dump_json() for entry in entries]
        self._check_writable()
        data = "".join(f"{line}\n" for line in lines).encode("utf-8")
        path = self.journal.path
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise MemoryFileError(path, f"could not write ({exc.strerror or exc})") from None
        try:
            start = os.fstat(fd).st_size
            try:
                write_all(fd, data)
                os.fsync(fd)
            except OSError as exc:
                _truncate(fd, start)  # no half line of ours is left behind
                raise MemoryFileError(path, f"could not write ({exc.strerror or exc})") from None
            self.replay = self.journal._extended(self.replay, entries, fd)
        finally:
            os.close(fd)

    def rewrite(self, records: Iterable[MemoryRecord] | None = None) -> None:
        """Replace the file by temp file + rename with `records` (default: the live records),
        oldest dropped first until `maxRecords` and `maxFileBytes` hold."""
        self._check_writable()
        config = self.journal.config
        ordered = sorted(self.records if records is None else records, key=lambda r: (r.ts, r.id))
        lines = [r.model_dump_json() + "\n" for r in ordered]
        lines = lines[-config.max_records :]
        size = sum(len(line.encode()) for line in lines)
        while lines and size > config.max_file_bytes:
            size -= len(lines.pop(0).encode())
        try:
            atomic_write_bytes(self.journal.path, b"".join(line.encode() for line in lines), mode=0o600)
        except UnsafePath as exc:
            raise MemoryFileError(self.journal.path, exc.reason) from None
        self.replay = self.journal._replay()

    def needs_rewrite(self) -> bool:
        return self.replay.dead > 0

    def _check_writable(self) -> None:
        info = self.journal._stat()
        if info is not None and not info.st_mode & stat.S_IWUSR:
            raise MemoryFileError(
                self.journal.path, f"is read-only (mode {stat.S_IMODE(info.st_mode):04o}); nothing is recorded"
            )


def writable_folder(folder: Path) -> None:
    """`MemoryFileError` unless `folder` is a folder its owner lets us write: the mode bits are
    asked too, so a folder made read-only is respected even by root (never chmod-ed)."""
    try:
        info = os.stat(folder)
    except OSError as exc:
        raise MemoryFileError(folder, f"memory folder cannot be used ({exc.strerror or exc})") from None
    if not stat.S_ISDIR(info.st_mode):
        raise MemoryFileError(folder, "memory folder is not a folder")
    needed = stat.S_IWUSR | stat.S_IXUSR
    if info.st_mode & needed != needed or not os.access(folder, os.W_OK | os.X_OK):
        raise MemoryFileError(
            folder, f"memory folder is read-only (mode {stat.S_IMODE(info.st_mode):04o}); nothing is recorded there"
        )


def write_all(fd: int, data: bytes) -> None:
    """The write seam (tests inject ENOSPC here): all of `data`, or an OSError."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.EIO, "nothing written")
        view = view[written:]


def leftover_temps(path: Path) -> list[Path]:
    """Temporary files `atomic_write_bytes` makes for `path` and its side files (`.NAME.XXXXXXXX.tmp`)."""
    stem = path.name.rsplit(".", 1)[0]
    pattern = re.compile(rf"\.{re.escape(stem)}\.[A-Za-z0-9]+\.[a-z0-9_]{{8}}\.tmp")
    try:
        return [p for p in path.parent.iterdir() if pattern.fullmatch(p.name)]
    except OSError:
        return []


def _truncate(fd: int, length: int) -> None:
    try:
        os.ftruncate(fd, length)
    except OSError:
        pass


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EACCES):
            return False
        raise MemoryFileError(Path(f"/proc/self/fd/{fd}"), f"cannot be locked ({exc.strerror})") from None
    return True


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    return "not a regular file"


class Ephemeral:
    """A log held in this process only (no file): an unnamed conversation, tests, an embedding
    program with its own storage. Same interface as `Journal`."""

    def __init__(self) -> None:
        self.replay = Replay()

    def read(self) -> Replay:
        return self.replay

    @contextmanager
    def change(self) -> Iterator[EphemeralTransaction]:
        yield EphemeralTransaction(self)


class EphemeralTransaction:
    def __init__(self, log: Ephemeral):
        self.log = log

    @property
    def replay(self) -> Replay:
        return self.log.replay

    @property
    def records(self) -> list[MemoryRecord]:
        return self.log.replay.records

    def append(self, records: Sequence[MemoryRecord] = (), tombstone: Tombstone | None = None) -> None:
        kept = self.records
        if tombstone is not None:
            kept = [] if tombstone.clear else [r for r in kept if r.id not in tombstone.forget]
        self.rewrite([*kept, *records])

    def rewrite(self, records: Iterable[MemoryRecord] | None = None) -> None:
        kept = sorted(self.records if records is None else records, key=lambda r: (r.ts, r.id))
        self.log.replay = Replay(records=kept)

    def needs_rewrite(self) -> bool:
        return False
