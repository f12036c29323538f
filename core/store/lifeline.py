"""Build processes that die with the process that started them.

A cold open's forkserver and its workers (core/store/pool.py) outlived a `kill -9` of mrptui by
minutes, holding ~360 MB and the caller's stdout/stderr, so `$(mrptui …)` or a pipe never saw
EOF: a worker holds both ends of its queue pipes and never notices its parent is gone. On Linux
each of them asks the kernel for SIGKILL when its parent dies (prctl PR_SET_PDEATHSIG): the
forkserver when mrptui dies, each worker when the forkserver does. The resource tracker then
exits by itself, its pipe's last writers being gone. Elsewhere (no prctl) this is a no-op, and the
workers stop when they next read their queue.

The forkserver imports this module as a preload (`guard_forkserver`), which is why the guard
runs at import when `PARENT_ENV` names this process's parent; the opening process sets that
variable only while it starts the forkserver.
"""

from __future__ import annotations

import os
import signal
import sys

PARENT_ENV = "MRPTUI_POOL_PARENT"
_PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """SIGKILL this process when its parent dies; exit now if `parent` is already gone (it died
    before the request was made, and no signal would ever come)."""
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def guard_worker() -> None:
    """The pool's initializer: each worker dies with the forkserver that forked it, and ignores
    Ctrl+C, which the terminal sends to the whole process group: the opening process stops the
    workers itself, without a traceback from each."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(os.getppid())
    started_by = os.environ.get(PARENT_ENV, "")
    if started_by.isdigit() and not _alive(int(started_by)):
        os._exit(1)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _guard_forkserver() -> None:
    started_by = os.environ.get(PARENT_ENV, "")
    if started_by.isdigit() and int(started_by) != os.getpid():
        die_with_parent(int(started_by))


_guard_forkserver()
