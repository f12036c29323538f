"""The budgets that stop a query's closure, and the name each stop is reported under.

Rule limits bound how far a closure may go (maxDepth rounds, maxDerivedFacts, maxJoinRows per join);
the budgets here stop it whatever those allow: wall time (maxClosureMs), the bytes its arrays hold
(maxClosureMb, estimated from array sizes before each allocation that can grow them), and a
caller's stop hook, polled between rounds, chunks, rule bodies and the joins of a rule body.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from core.retrieval.rules import Limits

FIXPOINT = "fixpoint"
CANCELLED = "cancelled"


@runtime_checkable
class Cancellable(Protocol):
    """Anything with a `cancelled` flag (the kernel's cancel token, a threading.Event wrapper...),
    read-only here: the closure only reads it."""

    @property
    def cancelled(self) -> bool: ...


# A stop hook: a token with `.cancelled`, or a callable returning True once the caller gave up.
StopHook = Cancellable | Callable[[], bool] | None


def budget_reason(limit: str, value: int) -> str:
    """How a stop by one limit is reported: `budget: maxDerivedFacts=64`."""
    return f"budget: {limit}={value}"


def _poller(hook: StopHook) -> Callable[[], bool]:
    if hook is None:
        return lambda: False
    if isinstance(hook, Cancellable):
        return lambda: bool(hook.cancelled)
    if callable(hook):
        return lambda: bool(hook())
    raise TypeError(f"a stop hook needs a 'cancelled' attribute or must be callable, not {type(hook).__name__}")


class Budget:
    """One query's wall-time, memory and cancellation budget; `reason` names the first that ran out."""

    def __init__(self, limits: Limits, hook: StopHook = None):
        self.limits = limits
        self.deadline = time.monotonic() + limits.max_closure_ms / 1000
        self.max_bytes = limits.max_closure_mb * 2**20
        self.cancelled = _poller(hook)
        self.reason: str | None = None

    @property
    def spent(self) -> bool:
        return self.reason is not None

    def stop(self, reason: str) -> None:
        """Record the first reason only: later checks run while the closure is winding down."""
        if self.reason is None:
            self.reason = reason

    def check(self) -> bool:
        """Whether the closure must stop now (time or cancellation); cheap enough for inner loops."""
        if self.reason is None:
            if self.cancelled():
                self.reason = CANCELLED
            elif time.monotonic() > self.deadline:
                self.reason = budget_reason("maxClosureMs", self.limits.max_closure_ms)
        return self.reason is not None

    def rows_that_fit(self, held: int, row_bytes: int) -> int:
        """How many more rows of `row_bytes` fit beside the `held` bytes."""
        return max(self.max_bytes - held, 0) // max(row_bytes, 1)

    def out_of_memory(self) -> None:
        self.stop(budget_reason("maxClosureMb", self.limits.max_closure_mb))
