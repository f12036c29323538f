"""Small typed messages: the engine worker reports with these, and widgets ask the app with them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from textual.message import Message

from core.infra.diagnostics import Diagnostic
from core.infra.progress import LoadProgress
from core.kernel.contract import Request
from core.kernel.events import Event
from core.units import CallerKey


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
class SwitchCaller(Message):
    """The caller window chose who to ask as (`mrptui.screens.caller.CallerChoice`)."""

    choice: Any


@dataclass
class KBReloaded(Message):
    """The KB files changed on disk and were re-read; `errors` counts error diagnostics, and
    `problems` says what they are and what they do (`kb_lifecycle.reload_problems`).
    `hdc_was_ready`: the caller's HDC index existed before, so the new view's is rebuilt."""

    errors: int
    hdc_was_ready: bool = False
    problems: str = ""


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
    """A background step on the open KB started or ended (the status line shows it). `caller`: the
    caller whose view's indexes it built, so a step for a caller since replaced is not taken for
    the new one's."""

    what: KBWorkName
    caller: CallerKey | None = None


@dataclass
class RunHeld(Message):
    """The engine of run `run_id` is held (nothing runs) at `where`, until the user steps or continues."""

    run_id: int
    where: str


# -- commands: a screen asks the app for something the app owns (run control, what-if, exports, the
# editor, a reload, memory); screens never import the app module. One class per command, each
# handled by the app's `on_<name>` method, which hands it to the component that does it.


class Rerun(Message):
    """Run the last question again (after a failed load: try opening the KB again)."""


@dataclass
class Step(Message):
    """Move the cursor `delta` events (forward past the last: let the held engine take one step)."""

    delta: int


class ToStart(Message):
    """The cursor to the run's first event."""


class ToEnd(Message):
    """Run to the end, past every breakpoint."""


class ContinueRun(Message):
    """Let the held engine go on to the next breakpoint or backtrack."""


class NextStage(Message):
    """Let the held engine go on to the next stage."""


class CancelRun(Message):
    """Cancel the live run (nothing running: nothing happens)."""


@dataclass
class ToggleBreak(Message):
    """Set or clear the breakpoint on the selected timeline row: its plugin's, or (`stage`) its stage's."""

    stage: bool = False


class PinSelected(Message):
    """Pin the selected attempt's plugin in its stage."""


class ExcludeSelected(Message):
    """Exclude the selected attempt's plugin."""


class ExcludeUnit(Message):
    """Drop the selected evidence unit from the run."""


class EditIntent(Message):
    """Edit the run's intent as CNL."""


class ShowDiff(Message):
    """Compare the last two runs."""


class SaveTrace(Message):
    """Save the current run's trace."""


class CopyFocused(Message):
    """Copy what the focused pane shows."""


class ExportCsv(Message):
    """Export the evidence at the cursor as CSV."""


class ExportMarkdown(Message):
    """Export the answer at the cursor as Markdown."""


class EvidenceDetail(Message):
    """Open the score breakdown of the selected evidence row."""


class MainReady(Message):
    """The main screen's widgets exist (after the first frame): the KB load may start."""


@dataclass
class OpenInEditor(Message):
    """Open `file` at `line` in the user's editor."""

    file: str
    line: int


class ReloadKB(Message):
    """Re-read the KB files now (after a failed load: try opening it again)."""


class MemoryPin(Message):
    """Pin the current run's question and lead as a note."""


@dataclass
class MemoryForget(Message):
    """Forget the memory record `record_id`."""

    record_id: str


class MemoryClear(Message):
    """Clear this conversation's turns."""


@dataclass
class RunQuestion(Message):
    """A screen asks the app to run this request and show it in the main screen."""

    request: Request
