"""What screens and the app's components may use of the explorer app they run in. Screens act by
posting `mrptui.messages.Command`; components (run driver, KB lifecycle, what-if, exports,
navigation) are handed the app as a `Host`. Nothing outside the CLI imports the app module."""

from __future__ import annotations

from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from core.kb.health import Health
from core.units import Caller
from mrptui.breakpoints import Breakpoint
from mrptui.kb_state import KBState
from mrptui.session_seam import SessionLike
from mrptui.state import RunRecord, ViewState

if TYPE_CHECKING:
    from mrptui.conversation import ExplorerMemory
    from mrptui.kb_lifecycle import KBLifecycle
    from mrptui.run_control import RunControl
    from mrptui.run_driver import RunDriver
    from mrptui.screens.main import MainScreen


class Explorer(Protocol):
    """What a screen reads."""

    caller: Caller
    kb_label: str
    cursor_blink: bool
    replay: bool
    kb_generation: int
    recorded_for: str  # replay: the caller the trace names (shown only)
    session: SessionLike
    memory: ExplorerMemory
    memory_generation: int

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


class Host(Explorer, Protocol):
    """What the app's components use: the explorer's state and its Textual App surface."""

    control: RunControl
    lifecycle: KBLifecycle
    runner: RunDriver
    main: MainScreen
    clock: Callable[[], float]
    show_durations: bool
    poll_interval: float
    batch_size: int
    batch_seconds: float
    queries_path: Path | None
    health: Health | None
    replay_note: str

    @property
    def runs(self) -> list[RunRecord]: ...

    @property
    def state(self) -> ViewState: ...

    @property
    def cursor(self) -> int: ...

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: Any = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None: ...

    def push_screen(self, screen: Any, callback: Any = None, wait_for_dismiss: bool = False) -> Any: ...

    def post_message(self, message: Any) -> bool: ...

    def call_later(self, callback: Any, *args: Any, **kwargs: Any) -> bool: ...

    def run_worker(
        self,
        work: Any,
        name: str | None = "",
        group: str = "default",
        description: str = "",
        exit_on_error: bool = True,
        start: bool = True,
        exclusive: bool = False,
        thread: bool = False,
    ) -> Any: ...

    def set_interval(
        self, interval: float, callback: Any = None, *, name: str | None = None, repeat: int = 0, pause: bool = False
    ) -> Any: ...

    def refresh_health(self, *, banner: bool = True) -> None: ...

    def show_kb_state(self) -> None: ...
