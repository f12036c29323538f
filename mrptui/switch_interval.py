"""The interpreter's thread switch interval while an engine run is pulled (issue 41, keypress).

The engine runs in a thread worker and its pure-Python loops hold the GIL. The UI thread gives the
GIL up at every turn of its event loop (the selector's poll releases it), and getting it back waits
until the engine thread is asked to drop it: up to the switch interval, 5 ms by default, per turn.
A key's way to a painted frame takes several turns (the app's queue, the focused widgets' queues,
the screen's refresh), so while a run is live a key waited tens of milliseconds for the GIL alone.
A shorter interval only costs while both threads want the GIL, so it is set while an engine worker
pulls and put back when the last one stops (the interval is the process's, hence one count for all
apps in it). The figures behind the value: docs/benchmarks.md, docs/decisions.md.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

LIVE_SWITCH_S = 0.001  # seconds; Python's default is 0.005

_lock = threading.Lock()
_pulling = 0
_saved = 0.0


@contextmanager
def while_pulling(live_s: float = LIVE_SWITCH_S) -> Iterator[None]:
    """Around one engine worker's pull: the interval is at most `live_s` while any worker pulls,
    and what it was before the first one started once the last one stops."""
    global _pulling, _saved
    with _lock:
        if _pulling == 0:
            _saved = sys.getswitchinterval()
            sys.setswitchinterval(min(_saved, live_s))
        _pulling += 1
    try:
        yield
    finally:
        with _lock:
            _pulling -= 1
            if _pulling == 0:
                sys.setswitchinterval(_saved)
