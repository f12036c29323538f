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

    def stamp(self, event: E) -> E:
        self.seq += 1
        return event.model_copy(update={"seq": self.seq})  # type: ignore[attr-defined, no-any-return]

    def emit(self, event: object) -> Generator[object, None, None]:
        """Yield one event, then take what a debugger changed while the generator was held there."""
        yield self.stamp(event)
        if self.steering is None:
            return
        while changes := self.steering.take():
            for intervention in changes:
                self.request = apply(self.request, intervention)
                yield self.stamp(intervened(intervention, live=True))
        if self.steering.cancelled:
            raise Cancelled


def intervened(intervention: Intervention, *, live: bool) -> Intervened:
    note = intervention.describe() + ("" if live else " (applied from the start of this re-run)")
    return Intervened(
        change=intervention.kind, target=intervention.target, stage=intervention.stage, live=live, note=note
    )
