"""Progress of opening a KB, reported to whoever opened it (the explorer shows it while it loads).

The callback is optional and called on the loading thread once per file (never per unit), and a
few times a second while worker processes build (core/store/pool.py), with the same figures. It may
raise (`core.cancel.Cancelled` when the user quits): the load then stops at that file and the
exception propagates, so no half-built KB is ever returned. Segments already published stay in
the cache; they are complete, because the store publishes each one atomically.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

Stage = Literal["scanning", "building", "reading", "preparing"]


@dataclass(frozen=True)
class LoadProgress:
    """Where a load is. `building`: worker processes build uncached files' segments (`done` of
    `total` such files; units are counted when they are read). `reading`: `done` of `total` files
    read (from the cache or built here), `units` units so far. `preparing`: the KB is read, the
    session builds its rules, plugins and engine."""

    stage: Stage
    done: int = 0
    total: int = 0
    units: int = 0


Progress = Callable[[LoadProgress], None]


def ignore(_: LoadProgress) -> None:
    """The callback when nobody listens."""
