"""What screens may read from the explorer app they run in. They act by posting
`mrptui.messages.Command`, so no screen imports the app module."""

from __future__ import annotations

from collections.abc import Collection
from typing import Protocol

from core.units import Caller
from mrptui.kb_state import KBState
from mrptui.state import Breakpoint, RunRecord


class Explorer(Protocol):
    caller: Caller
    kb_label: str
    cursor_blink: bool
    replay: bool
    kb_generation: int
    recorded_for: str  # replay: the caller the trace names (shown only)

    @property
    def current(self) -> RunRecord | None: ...

    @property
    def kb_state(self) -> KBState: ...

    @property
    def replay_without_kb(self) -> bool: ...

    @property
    def breakpoints(self) -> Collection[Breakpoint]: ...

    @property
    def held(self) -> str: ...

    @property
    def last_question(self) -> str: ...

    def ask_session(self, method: str, *args: object, default: object = None) -> object: ...
