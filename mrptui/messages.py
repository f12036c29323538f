"""Small typed messages: the engine worker reports with these, and widgets ask the app with them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from textual.message import Message

from core.infra.diagnostics import Diagnostic
from core.infra.progress import LoadProgress
from core.kernel.contract import Request
from core.kernel.events import Event


@dataclass
class EventsArrived(Message):
    """A batch of trace events pulled from the engine generator for run `run_id`."""

    run_id: int
    events: tuple[Event, ...]


@dataclass
class RunEnded(Message):
    """The engine generator of run `run_id` is exhausted (or was stopped)."""

    run_id: int


@dataclass
class QuerySubmitted(Message):
    """The user asked a question from the query box."""

    question: str


@dataclass
class OpenUnit(Message):
    """A widget wants to show a unit (a proof leaf, a citation, an evidence row)."""

    unit_id: str


@dataclass
class KBReloaded(Message):
    """The KB files changed on disk and were re-read; `errors` counts error diagnostics.
    `hdc_was_ready`: the caller's HDC index existed before, so the new view's is rebuilt."""

    errors: int
    hdc_was_ready: bool = False


@dataclass
class KBLoadProgressed(Message):
    """The KB load (in its worker) finished one more file."""

    progress: LoadProgress


@dataclass
class KBOpened(Message):
    """The load worker opened the session; `fingerprint` is its files' stat digest at that time."""

    session: Any
    fingerprint: str


@dataclass
class KBLoadFailed(Message):
    """The session could not be opened: why, as diagnostics with file and line where known."""

    problems: tuple[Diagnostic, ...]


KBWorkName = Literal["indexes_ready", "hdc_building", "hdc_ready", "hdc_rebuilt", "hdc_failed", "reloading"]


@dataclass
class KBWork(Message):
    """A background step on the open KB started or ended (the status line shows it)."""

    what: KBWorkName


@dataclass
class RunHeld(Message):
    """The engine of run `run_id` is held (nothing runs) at `where`, until the user steps or continues."""

    run_id: int
    where: str


CommandName = Literal[
    "rerun",
    "step",
    "to_end",
    "to_start",
    "continue",
    "next_stage",
    "cancel",
    "break",
    "break_stage",
    "pin",
    "exclude",
    "exclude_unit",
    "edit_intent",
    "diff",
    "save",
    "copy",
    "csv",
    "markdown",
    "open_in_editor",
    "reload",
    "main_ready",
    "evidence_detail",
    "open_unit",
    "undo",
    "toggle_breakpoint",
    "memory_pin",
    "memory_forget",
    "memory_clear",
]


@dataclass
class Command(Message):
    """A screen asks the app for something the app owns (run control, exports, the editor, a reload):
    screens never import the app module."""

    name: CommandName
    args: tuple[Any, ...] = ()


@dataclass
class RunQuestion(Message):
    """A screen asks the app to run this request and show it in the main screen."""

    request: Request
