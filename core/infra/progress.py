"""Progress of opening a KB, reported to whoever opened it (the explorer shows it while it loads).

The callback is optional and called on the loading thread once per file (never per unit), and a
few times a second while worker processes build (core/store/pool.py), with the same figures. It may
raise (`core.infra.cancel.Cancelled` when the user quits): the load then stops at that file and the
exception propagates, so no half-built KB is ever returned. Segments already published stay in
the cache; they are complete, because the store publishes each one atomically.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

Stage = Literal["scanning", "building", "reading", "preparing"]


@dataclass(frozen=True)
class LoadProgress:
    """Where a load is. `building`: worker processes build uncached files' segments (`done` of
    `total` such files; units are counted when they are read). `reading`: `done` of `total` files
    read (from the cache or built here), `units` units so far. `preparing`: the KB is read, the
    session builds its rules, plugins and engine. `left`: whole seconds the stage should still
    take at the rate it went so far (None until there is a rate to go by)."""

    stage: Stage
    done: int = 0
    total: int = 0
    units: int = 0
    left: int | None = None


Progress = Callable[[LoadProgress], None]


def ignore(_: LoadProgress) -> None:
    """The callback when nobody listens."""


class Estimate:
    """Time left of a stage whose work is known in advance (bytes of files to build, files to
    read), at the rate its finished work went. Between two finished pieces the estimate counts
    down with the clock rather than growing (work in flight is not counted until it finishes),
    and it is whole seconds, so a caller that skips repeated updates hears about one a second.
    `settle`: pieces to finish before there is an estimate. Workers in parallel finish their
    first pieces together, so the first alone would halve the rate (2 workers: "~24 s left",
    then "~8 s left" a moment later)."""

    def __init__(self, total: float, clock: Callable[[], float] = time.monotonic, settle: int = 1):
        self.total = total
        self._clock = clock
        self._settle = settle
        self._started = clock()
        self._pieces = 0
        self._done = 0.0
        self._done_at = 0.0

    def advance(self, amount: float, pieces: int = 1) -> None:
        """`amount` more of the work is finished now, in `pieces` pieces."""
        self._pieces += pieces
        self._done += amount
        self._done_at = self._clock() - self._started

    def left(self) -> int | None:
        if self._done <= 0 or self._pieces < self._settle:
            return None
        projected = self._done_at * max(self.total - self._done, 0.0) / self._done
        since = self._clock() - self._started - self._done_at
        return max(0, round(projected - since))
