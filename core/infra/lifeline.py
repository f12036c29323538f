"""Build processes that die with the process that started them.

A cold open's forkserver and its workers (core/store/pool.py) outlived a `kill -9` of mrptui by
minutes, holding ~360 MB and the caller's stdout/stderr, so `$(mrptui …)` or a pipe never saw
EOF: a worker holds both ends of its queue pipes and never notices its parent is gone. On Linux
each of them asks the kernel for SIGKILL when its parent dies (prctl PR_SET_PDEATHSIG): the
forkserver when mrptui dies, each worker when the forkserver does. The resource tracker then
exits by itself, its pipe's last writers being gone. Elsewhere (no prctl) this is a no-op, and the
workers stop when they next read their queue.

`start_forkserver` starts the forkserver with this module as a preload, which is why the guard
(`_guard_forkserver`) runs at import when `PARENT_ENV` names another process; the starting
process sets that variable only while the forkserver starts.
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


def start_forkserver() -> None:
    """Start multiprocessing's forkserver (once per process) so that it, and through
    `guard_worker` each worker, dies with this process. It preloads the pool module: each worker
    is forked with the build code imported instead of importing it anew. Best from the main
    thread: the kernel's "parent" is the thread that started the forkserver, so one started by
    a worker thread dies with that thread (the next build starts a new one)."""
    import multiprocessing
    from multiprocessing import forkserver

    multiprocessing.get_context("forkserver").set_forkserver_preload([__name__, "core.store.pool"])
    before = os.environ.get(PARENT_ENV)
    os.environ[PARENT_ENV] = str(os.getpid())
    try:
        forkserver.ensure_running()
    finally:
        if before is None:
            os.environ.pop(PARENT_ENV, None)
        else:
            os.environ[PARENT_ENV] = before


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
