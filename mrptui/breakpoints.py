"""Where a run held by the explorer or `ask --step` stops: breakpoints and the next stop after a cursor."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from core.kernel.events import AttemptStarted, Backtracked, Event, PlanBuilt, StageStarted


@dataclass(frozen=True, order=True)
class Breakpoint:
    """Where a run holds: a stage starting, a plugin about to be called, any backtrack, before
    costly plugins (LLM, remote) or before every plugin call. `step` and `at` are the holds that
    end a step and that re-find the point a re-run was asked from; no event matches them."""

    kind: Literal["stage", "plugin", "backtrack", "costly", "call", "step", "at"]
    value: str = "*"

    def matches(self, event: Event, costly: Collection[str] = ()) -> bool:
        if self.kind == "stage":
            if self.value == "*":
                return isinstance(event, StageStarted | PlanBuilt)
            return isinstance(event, StageStarted) and event.stage == self.value
        if self.kind == "plugin":
            if isinstance(event, PlanBuilt):
                return event.planner == self.value
            return isinstance(event, AttemptStarted) and event.plugin == self.value
        if self.kind == "costly":
            return isinstance(event, AttemptStarted) and event.plugin in costly
        if self.kind == "call":
            return isinstance(event, AttemptStarted)
        return self.kind == "backtrack" and isinstance(event, Backtracked)

    @property
    def label(self) -> str:
        labels = {
            "backtrack": "any backtrack",
            "costly": "before costly plugins",
            "call": "before every plugin call",
            "step": "one step",
            "at": self.value,
        }
        return labels.get(self.kind, f"{self.kind} {self.value}")


def next_stop(
    events: Sequence[Event], start: int, breakpoints: Iterable[Breakpoint], *, backtracks: bool
) -> tuple[int, Breakpoint | None]:
    """From cursor `start`, the cursor just after the next event that hits a breakpoint.

    With `backtracks`, any Backtracked event stops too. Returns (len(events), None) when nothing
    stops before the end.
    """
    points = tuple(breakpoints)
    for position in range(start, len(events)):
        event = events[position]
        for point in points:
            if point.matches(event):
                return position + 1, point
        if backtracks and isinstance(event, Backtracked):
            return position + 1, Breakpoint("backtrack")
    return len(events), None
