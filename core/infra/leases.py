"""Read leases on mapped cache files, so a truncation that lands during a question waits for it.

A mapped file that shrinks kills the process with SIGBUS on the next read past its new end, and
no Python code can catch that. Checking the file before each question (core/store/mapped.py)
leaves the question itself as the window. On Linux a *read lease* (fcntl F_SETLEASE) closes it:
another process that opens the file for writing or truncates it is held by the kernel until the
lease holder releases the lease, or for `/proc/sys/fs/lease-break-time` (45 s by default), and
the holder hears SIGIO. So:

- each large mapped file keeps a read-only descriptor with a read lease while its mapping lives
  (at most `MAX_LEASES`, and a quarter of the descriptor limit);
- on SIGIO the leases a writer waits on are marked broken; `damaged()` reports them, so the
  session rebuilds from the KB files before its next question;
- a broken lease is released when no question of this process is running (`question()`), at
  once if none is: the writer waits for the question in flight, not for the next one.

Residual risk (docs/store.md): a question still reading more than the lease-break time after the
writer started (a run held at a breakpoint), reads outside a question (a unit restored for the
explorer's KB screen from a view made before the truncation), files beyond the lease budget, a
file system without leases (NFS) or a file someone holds open for writing when it is mapped (no
lease is granted: only the per-question check applies), and a process whose SIGIO handler
could not be installed (leases are taken only once `arm()` ran in the main thread).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import resource
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any, TypedDict

_F_SETLEASE = getattr(fcntl, "F_SETLEASE", 1024)
_F_GETLEASE = getattr(fcntl, "F_GETLEASE", 1025)
MAX_LEASES = 256
_LOCK = threading.RLock()
_HELD: dict[int, tuple[int, str]] = {}  # mapping key -> (descriptor holding the lease, path)
_BROKEN: dict[int, str] = {}  # keys whose lease a writer waits on


class _State(TypedDict):
    armed: bool
    questions: int
    previous: Callable[[int, FrameType | None], Any] | int | None  # the SIGIO handler arm() replaced


_state: _State = {"armed": False, "questions": 0, "previous": None}


def arm() -> bool:
    """Install the SIGIO handler (main thread only; chained to any handler already there).
    Without it no lease is taken: an unhandled SIGIO would terminate the process."""
    with _LOCK:
        if _state["armed"]:
            return True
        if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGIO"):
            return False
        try:
            _state["previous"] = signal.signal(signal.SIGIO, _on_sigio)
        except (ValueError, OSError):
            return False
        _state["armed"] = True
        return True


def hold(key: int, fd: int, path: str) -> bool:
    """Take a read lease on `fd` (a read-only descriptor of `path` this module now owns, closed by
    `release`) for the mapping `key`; False (and `fd` closed) when none can be had."""
    with _LOCK:
        if _state["armed"] and len(_HELD) < _budget():
            try:
                fcntl.fcntl(fd, _F_SETLEASE, fcntl.F_RDLCK)
            except OSError:
                pass  # a writer has it open, leases are off or unsupported here
            else:
                _HELD[key] = (fd, path)
                return True
    os.close(fd)
    return False


def release(key: int) -> None:
    """The mapping `key` is gone: drop its lease and descriptor."""
    with _LOCK:
        held = _HELD.pop(key, None)
        _BROKEN.pop(key, None)
    if held is not None:
        _close(held[0])


def broken() -> dict[int, str]:
    """Mappings whose file a writer is waiting to change (by key, with its path)."""
    _poll()
    with _LOCK:
        return dict(_BROKEN)


@contextlib.contextmanager
def question() -> Iterator[None]:
    """While a question runs, a broken lease is kept: the writer waits for the question to end."""
    with _LOCK:
        _state["questions"] += 1
    try:
        yield
    finally:
        with _LOCK:
            _state["questions"] -= 1
        _poll()


def _on_sigio(signum, frame) -> None:
    _poll()
    previous = _state["previous"]
    if callable(previous):
        previous(signum, frame)


def _poll() -> None:
    """Mark the leases a writer waits on; release them when no question runs."""
    with _LOCK:
        for key, (fd, path) in list(_HELD.items()):
            if key not in _BROKEN and _lease_of(fd) != fcntl.F_RDLCK:
                _BROKEN[key] = path
        if _state["questions"]:
            return
        # A copy: giving a lease up lets its writer on, whose next file's break may run this
        # again (the signal handler, on this thread, through the reentrant lock).
        for key in list(_BROKEN):
            held = _HELD.get(key)
            if held is not None and held[0] >= 0:
                _unlease(held[0])
                _close(held[0])
                _HELD[key] = (-1, held[1])  # the mapping stays damaged until it is freed


def _lease_of(fd: int) -> int:
    if fd < 0:
        return fcntl.F_UNLCK
    try:
        return fcntl.fcntl(fd, _F_GETLEASE)
    except OSError:
        return fcntl.F_UNLCK


def _unlease(fd: int) -> None:
    """Give the lease up now. Closing the descriptor alone does not: the lease belongs to the
    open file, which a mapping made from it keeps open, so the writer waited the whole
    lease-break time (45 s a file, measured)."""
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, _F_SETLEASE, fcntl.F_UNLCK)


def _close(fd: int) -> None:
    if fd >= 0:
        with contextlib.suppress(OSError):
            os.close(fd)


def _budget() -> int:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return MAX_LEASES if soft == resource.RLIM_INFINITY else min(MAX_LEASES, soft // 4)
