"""Cooperative cancellation and shared per-request call budgets.

Python cannot stop a thread from outside, so the kernel gives every plugin call a `CancelToken`
with the call's deadline: when the plugin timeout or the request's deadline passes (or the user
interrupts), the token is set, and a plugin that polls it stops instead of running on. Long
loops poll `raise_if_cancelled()` (cheap: one flag and one clock read); code that has no
`RunContext` at hand reads the calling thread's token with `current()`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager


class Cancelled(Exception):
    """Raised inside a plugin by `raise_if_cancelled`; the kernel records the attempt as cancelled."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class CancelToken:
    """Set by the kernel, polled by plugins. `deadline` is on the `time.monotonic()` clock, and
    `budget` names what set it ("pluginTimeoutMs"), so the reason always says which budget stopped it.

    Work that is not the plugin's own (a lazy index build the first query of a view pays for) runs
    `paused`: the deadline stops counting meanwhile and moves on by the time it took, so a plugin
    timeout is not spent on it; only `hard_deadline` (the request's, named by `hard_budget`)
    still applies. `paused_s` and `paused_for` say how long and for what, for the trace."""

    def __init__(
        self,
        deadline: float | None = None,
        budget: str = "deadline",
        hard_deadline: float | None = None,
        hard_budget: str = "deadline",
    ):
        self.deadline = deadline
        self.budget = budget
        self.hard_deadline = hard_deadline
        self.hard_budget = hard_budget
        self.paused_s = 0.0
        self.paused_for: list[str] = []
        # Caps that bit during the call (`note_budget`), for its trace reason.
        self.budget_notes: list[str] = []
        # The shards the call searched on a cluster (`note_shards`): their number, the ms each
        # (0-based) ran on a worker, and those that did not answer.
        self.shard_count = 0
        self.shard_ms: dict[int, float] = {}
        self.shards_missing: set[int] = set()
        self._event = threading.Event()
        self._reason = ""
        self._pause_lock = threading.Lock()
        self._pauses = 0
        self._paused_at = 0.0

    @property
    def cancelled(self) -> bool:
        if self._event.is_set():
            return True
        now = time.monotonic()
        if self.hard_deadline is not None and now >= self.hard_deadline:
            self.cancel(f"{self.hard_budget} passed")
            return True
        if not self._pauses and self.deadline is not None and now >= self.deadline:
            self.cancel(f"{self.budget} passed")
            return True
        return False

    @property
    def is_paused(self) -> bool:
        return self._pauses > 0

    @contextmanager
    def paused(self, what: str) -> Iterator[None]:
        """Run `what` without charging its time to `deadline` (nested pauses count once)."""
        with self._pause_lock:
            self._pauses += 1
            if self._pauses == 1:
                self._paused_at = time.monotonic()
        try:
            yield
        finally:
            with self._pause_lock:
                self._pauses -= 1
                if self._pauses == 0:
                    took = time.monotonic() - self._paused_at
                    self.paused_s += took
                    self.paused_for.append(what)
                    if self.deadline is not None:
                        self.deadline += took

    @property
    def reason(self) -> str:
        return self._reason

    def cancel(self, reason: str) -> None:
        """Set the token; the first reason given is the one kept."""
        if not self._event.is_set():
            self._reason = reason
            self._event.set()

    def raise_if_cancelled(self) -> None:
        if self.cancelled:
            raise Cancelled(self._reason)

    def remaining(self) -> float | None:
        """Seconds left before the deadline in force (never negative), or None without one."""
        deadlines = [d for d in (None if self._pauses else self.deadline, self.hard_deadline) if d is not None]
        return max(0.0, min(deadlines) - time.monotonic()) if deadlines else None

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`, waking early when cancelled; True when cancelled."""
        remaining = self.remaining()
        self._event.wait(seconds if remaining is None else min(seconds, remaining))
        return self.cancelled


class _Never(CancelToken):
    """The token of code run outside any plugin call: nothing ever cancels it."""

    def cancel(self, reason: str) -> None:
        return None

    @contextmanager
    def paused(self, what: str) -> Iterator[None]:
        yield


NEVER = _Never()
_local = threading.local()
_interrupted = threading.Event()


def note_interrupt() -> None:
    """Record that the user pressed Ctrl+C (called by the CLI's SIGINT handler).

    Python raises KeyboardInterrupt wherever the main thread happens to be; inside a finaliser
    (a `__del__`, a weakref callback run by the garbage collector) it is printed and dropped, and
    the run would go on. The kernel also polls this flag while it waits for a plugin, so a dropped
    interrupt still stops the run.
    """
    _interrupted.set()


def interrupt_requested() -> bool:
    return _interrupted.is_set()


def clear_interrupt() -> None:
    _interrupted.clear()


def current() -> CancelToken:
    """The token of the plugin call running on this thread (NEVER outside one)."""
    return getattr(_local, "token", NEVER)


def note_budget(note: str) -> None:
    """Tell the running plugin call's trace that a cap bit (`hdc.maxUnitTokens: …`), so the cap
    names itself; outside a plugin call there is no trace to tell, and nothing happens."""
    token = current()
    if token is not NEVER and note not in token.budget_notes:
        token.budget_notes.append(note)


def note_shards(count: int, ms: Mapping[int, float], missing: Iterable[int] = ()) -> None:
    """Tell the running plugin call's trace what one round of shard tasks took (ms per 0-based
    shard) and which shards did not answer; outside a plugin call nothing happens."""
    token = current()
    if token is NEVER:
        return
    token.shard_count = max(token.shard_count, count)
    for shard, took in ms.items():
        token.shard_ms[shard] = token.shard_ms.get(shard, 0.0) + took
    token.shards_missing.update(missing)


@contextmanager
def bound(token: CancelToken) -> Iterator[CancelToken]:
    """Make `token` this thread's `current()` for the duration of one plugin call."""
    previous = current()
    _local.token = token
    try:
        yield token
    finally:
        _local.token = previous


class CallBudget:
    """Calls one request may still make (e.g. to the LLM), shared by all its plugin calls.

    A call is charged when it starts, so one that then fails, times out or is abandoned by the
    kernel still counts. `deadline` (monotonic) bounds the wall time all of them take together.
    """

    def __init__(self, calls: int, deadline: float | None = None, name: str = "calls", deadline_name: str = "deadline"):
        self._left = calls
        self._lock = threading.Lock()
        self.deadline = deadline
        self.name = name
        self.deadline_name = deadline_name

    @property
    def left(self) -> int:
        return self._left

    def take(self) -> bool:
        """Charge one call; False (and nothing charged) when none is left."""
        with self._lock:
            if self._left <= 0:
                return False
            self._left -= 1
            return True

    def charge(self, calls: int) -> None:
        """Charge calls made without `take` (a plugin that only reports its count)."""
        with self._lock:
            self._left = max(0, self._left - calls)
