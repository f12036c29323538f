"""Steering a run from outside while it is held: interventions and cancellation.

A debugger (the explorer, `mrptui ask --step`) pulls `Engine.run()` one event at a time. While it
holds the generator, nothing runs; what the user changes meanwhile goes into a `Steering`, which
the kernel drains every time it resumes, before its next decision (which candidate to call, which
view to rank, which intent to solve). The same changes applied from the start of a run are plain
`Request` fields, so a re-run and a live continuation mean the same thing.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from core.kernel.contract import Request

InterventionKind = Literal["exclude_plugin", "pin_plugin", "exclude_unit", "edit_intent"]


class Intervention(BaseModel):
    """One change a user made to a run: `target` is a plugin id, a unit id or Intent CNL text."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    kind: InterventionKind
    target: str
    stage: str | None = None  # the stage a pin is for

    def describe(self) -> str:
        match self.kind:
            case "exclude_plugin":
                return f"{self.target} excluded by the user"
            case "pin_plugin":
                return f"{self.target} pinned first for {self.stage} by the user"
            case "exclude_unit":
                return f"unit {self.target} excluded from the evidence by the user"
        return "intent edited by the user"


def apply(request: Request, intervention: Intervention) -> Request:
    """`request` as if the change had been asked for from the start (and recorded as such)."""
    pins = dict(request.pins)
    excluded = set(request.excluded)
    units = set(request.excluded_units)
    intent = request.intent_cnl
    match intervention.kind:
        case "exclude_plugin":
            excluded.add(intervention.target)
            pins = {stage: plugin for stage, plugin in pins.items() if plugin != intervention.target}
        case "pin_plugin":
            pins[intervention.stage or ""] = intervention.target
            excluded.discard(intervention.target)
        case "exclude_unit":
            units.add(intervention.target)
        case "edit_intent":
            intent = intervention.target
    return replace(
        request,
        pins=pins,
        excluded=frozenset(excluded),
        excluded_units=frozenset(units),
        intent_cnl=intent,
        interventions=(*request.interventions, intervention),
    )


class Steering:
    """Thread-safe mailbox between a debugger (writer) and one running engine generator (reader)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: list[Intervention] = []
        self._cancelled = threading.Event()

    def intervene(self, intervention: Intervention) -> None:
        with self._lock:
            self._pending.append(intervention)

    def take(self) -> list[Intervention]:
        """The changes made since the last call, oldest first."""
        with self._lock:
            pending, self._pending = self._pending, []
        return pending

    def cancel(self) -> None:
        self._cancelled.set()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def wait_cancelled(self, timeout: float) -> bool:
        """Sleep up to `timeout` seconds, waking at once on cancellation; True when cancelled."""
        return self._cancelled.wait(timeout)
