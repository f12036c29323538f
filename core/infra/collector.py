"""One pause of the cyclic garbage collector shared by the code that builds many long-lived
objects at once: a reader over a large file, a segment build, the build pool's reads.

Such work keeps hundreds of thousands of new objects alive (units, tokens), so the collector
would run again and again, each time walking everything the process holds: at 20k units that
was a quarter of a build's CPU and a third of a dense file's read, and it grows with the KB
already loaded. The work is bounded (one file, at most `MAX_FILE_BYTES`) and makes no cycles:
reference counting frees it, and what is left unreachable is collected once the collector is
back on. Nested and concurrent pauses share one, and a collector someone else turned off stays
off.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_pause = {"depth": 0, "resume": False}
_lock = threading.Lock()


@contextmanager
def collector_paused() -> Iterator[None]:
    with _lock:
        if _pause["depth"] == 0:
            _pause["resume"] = gc.isenabled()
            gc.disable()
        _pause["depth"] += 1
    try:
        yield
    finally:
        with _lock:
            _pause["depth"] -= 1
            if _pause["depth"] == 0 and _pause["resume"]:
                gc.enable()


_full = {"depth": 0, "threshold": 0}
# Young collections between two full ones while full ones wait: never reached in practice.
NO_FULL_COLLECTIONS = 2**31 - 1


@contextmanager
def full_collections_paused() -> Iterator[None]:
    """No full collection while inside (the oldest generation's threshold out of reach); young
    ones go on. For long work that keeps many objects alive in another thread than the UI's (the
    explorer's HDC build: a minute at 100k): each full collection walks all of them with the
    interpreter's lock held, while the cyclic garbage the UI makes meanwhile, which the young
    collections find, is still freed (`collector_paused` kept ~140 MB of it for that minute).
    Nested and concurrent pauses share one."""
    with _lock:
        if _full["depth"] == 0:
            young, middle, _full["threshold"] = gc.get_threshold()
            gc.set_threshold(young, middle, NO_FULL_COLLECTIONS)
        _full["depth"] += 1
    try:
        yield
    finally:
        with _lock:
            _full["depth"] -= 1
            if _full["depth"] == 0:
                young, middle, _ = gc.get_threshold()
                gc.set_threshold(young, middle, _full["threshold"])


# Whether `keep_out_of_collections` may have frozen objects that `back_into_collections` has not
# released: asked instead of `gc.get_freeze_count()`, which counts the frozen objects one by one
# (CPython 3.11: ~50 ms a million, paid by every in-process CLI call after a large KB or the
# explorer froze its millions).
_frozen = threading.Event()


def keep_out_of_collections() -> None:
    """Move every object the process now holds out of the cyclic collector's generations
    (`gc.freeze`, after one collection so no garbage is kept with them), for objects that live
    as long as the process or session: a large KB's units and indexes, numba's modules. Each full
    collection walks every object left in the generations, so ~100k of them that never die make
    each one cost tens of ms of a question's CPU. Frozen objects are still freed by reference
    counting; `back_into_collections` puts them back."""
    gc.collect()
    with _lock:
        gc.freeze()
        _frozen.set()


def back_into_collections() -> None:
    """Everything frozen back into the oldest generation, so what of it has become cyclic garbage
    (a replaced KB, a closed app) is collected again."""
    with _lock:
        gc.unfreeze()
        _frozen.clear()


def promote_young() -> None:
    """Move the objects no pass has walked yet to the oldest generation without walking them
    (`gc.freeze` then `gc.unfreeze`): back at a lower threshold, the next allocation would walk
    them all at once (the ~75k objects a warm ask made, ~0.018 CPU s), although most of them live
    until the process ends. They are still collected by the oldest generation's passes. Only while
    nothing is kept out of collections (the explorer's KB: kb_lifecycle.quiet_gc), since the
    unfreeze would release that too."""
    with _lock:
        if not _frozen.is_set():
            gc.freeze()
            gc.unfreeze()
