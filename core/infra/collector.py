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


def keep_out_of_collections() -> None:
    """Move every object the process now holds out of the cyclic collector's generations
    (`gc.freeze`, after one collection so no garbage is kept with them), for objects that live
    as long as the process or session: a large KB's units and indexes, numba's modules. Each full
    collection walks every object left in the generations, so ~100k of them that never die make
    each one cost tens of ms of a question's CPU. Frozen objects are still freed by reference
    counting; `gc.unfreeze` puts them back."""
    gc.collect()
    gc.freeze()
