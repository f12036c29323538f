"""What screens read of the explorer app they run in (they act by posting the command messages of
`mrptui.messages`). Nothing outside the CLI imports the app module; components are handed their
collaborators by the app and never read this."""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Protocol

from core.units import Caller
from mrptui.breakpoints import Breakpoint
from mrptui.kb_state import KBState
from mrptui.open_kb import OpenKB
from mrptui.session_seam import SessionLike
from mrptui.state import RunRecord

if TYPE_CHECKING:
    from textual.theme import Theme

    from mrptui.conversation import ExplorerMemory


class Explorer(Protocol):
    kb: OpenKB  # the open session and caller; `kb.call` is how a screen calls the session
    kb_label: str
    cursor_blink: bool
    replay: bool
    kb_generation: int
    recorded_for: str  # replay: the caller the trace names (shown only)
    memory: ExplorerMemory
    memory_generation: int

    @property
    def caller(self) -> Caller: ...

    @property
    def session(self) -> SessionLike: ...

    @property
    def current(self) -> RunRecord | None: ...

    @property
    def kb_state(self) -> KBState: ...

    @property
    def replay_without_kb(self) -> bool: ...

    @property
    def breakpoints(self) -> Collection[Breakpoint]: ...

    @property
    def last_question(self) -> str: ...

    @property
    def current_theme(self) -> Theme: ...
