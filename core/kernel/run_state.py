"""What one run of the kernel carries from stage to stage, and how it yields an event: numbered,
then taking what a debugger changed while the generator was held there."""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from core.infra.cancel import CallBudget
from core.kernel.call_budgets import RequestGuard
from core.kernel.contract import KbResult, Request
from core.kernel.events import Intervened
from core.kernel.steering import Intervention, Steering, apply
from core.question import Questions

E = TypeVar("E")


class Cancelled(Exception):
    """Raised inside the run when the steering was cancelled; the engine turns it into RunFinished."""


@dataclass
class RunState:
    """One run's state while the kernel drives it: its request, budgets, clock and what it has tried."""

    request: Request
    view: Any
    services: object
    llm_budget: CallBudget
    # On the time.monotonic() clock, which the cancel tokens use; `clock` only times events.
    deadline: float
    clock: Callable[[], float]
    # The request's memory budget and the plugin threads it left running (core/kernel/call_budgets.py).
    guard: RequestGuard
    seq: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    tried: set[tuple[int, str, str]] = field(default_factory=set)
    kb_cache: dict[tuple[int, str, frozenset[str]], KbResult] = field(default_factory=dict)
    steering: Steering | None = None
    # The run's questions, each analysed once: the planner reads the request's, every plugin its intent's.
    questions: Questions = field(default_factory=Questions)

    def new(self, event_type: Callable[..., E], **fields: Any) -> E:
        """An event the kernel builds, numbered as it is built: no copy to number it."""
        self.seq += 1
        return event_type(seq=self.seq, **fields)

    def stamp(self, event: E, **changes: Any) -> E:
        """A numbered copy, with `changes`, of an event built elsewhere (a plugin's, the answer)."""
        self.seq += 1
        return event.model_copy(update={**changes, "seq": self.seq})  # type: ignore[attr-defined, no-any-return]

    def emit(self, event_type: Callable[..., object], **fields: Any) -> Generator[object, None, None]:
        """Build and yield one event, then take what a debugger changed while the generator was held there."""
        yield self.new(event_type, **fields)
        if self.steering is not None:
            yield from self._steered(self.steering)

    def relay(self, event: object, **changes: Any) -> Generator[object, None, None]:
        """`emit` for an event built elsewhere: its numbered copy, with `changes`."""
        yield self.stamp(event, **changes)
        if self.steering is not None:
            yield from self._steered(self.steering)

    def _steered(self, steering: Steering) -> Generator[object, None, None]:
        """What a debugger changed while the generator was held at the event just yielded."""
        while changes := steering.take():
            for intervention in changes:
                self.request = apply(self.request, intervention)
                yield self.stamp(intervened(intervention, live=True))
        if steering.cancelled:
            raise Cancelled


def intervened(intervention: Intervention, *, live: bool) -> Intervened:
    note = intervention.describe() + ("" if live else " (applied from the start of this re-run)")
    return Intervened(
        change=intervention.kind, target=intervention.target, stage=intervention.stage, live=live, note=note
    )
