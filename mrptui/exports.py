"""What the explorer saves: the trace (JSON Lines), the evidence table (CSV), the answer (Markdown).

Each export is prepared here from the run's state; the app asks for the path (prefilled with a
free name in `export_dir()`) and calls `write_export`, which writes atomically and refuses
folders, devices, links and the session's own KB and config files (`core.infra.safe_io`, `protected`).
Every export holds what the caller was shown, so it is written 0600 whatever the umask, and it
replaces an existing file only when that file carries the export's own marker (a trace's first
event, the CSV's header, the Markdown's closing comment): a typed path never loses a user's file.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.infra.safe_io import Marked, Protected, UnsafePath, atomic_write_text
from core.kernel.events import RetrievalScored, RunStarted, write_trace
from mrptui.paths import user_data_dir
from mrptui.state import RunRecord
from mrptui.widgets.answer import answer_markdown
from mrptui.widgets.evidence import candidates_csv

EXPORTS_ENV = "MRPTUI_EXPORTS"
EXPORT_MODE = 0o600
ANSWER_MARK = "<!-- exported by mrptui -->\n"
MAX_SAME_NAME = 1000  # free_path's budget: names tried before it gives the last one


def export_dir() -> Path:
    """Where exports go unless the user types another path: `$MRPTUI_EXPORTS`, else the data
    folder's `exports` (never the working directory, which may be the KB's own folder)."""
    override = os.environ.get(EXPORTS_ENV)
    return Path(override).expanduser() if override else user_data_dir() / "exports"


def free_path(folder: Path, stem: str, suffix: str) -> Path:
    """`folder/stem.suffix`, or `stem-2.suffix`, … the first name not taken (run numbers restart
    with every session, so a fixed name would replace the last session's export)."""
    for n in range(1, MAX_SAME_NAME + 1):
        path = folder / (f"{stem}{suffix}" if n == 1 else f"{stem}-{n}{suffix}")
        if not os.path.lexists(path):
            return path
    return path


@dataclass(frozen=True)
class Export:
    """One thing the explorer can save, and how to write it."""

    title: str
    stem: str  # the default file name without its suffix, e.g. "trace-run1"
    suffix: str
    write: Callable[[Path], str]
    """Writes the file and says what it wrote ("saved 42 events")."""

    def default_path(self, folder: Path) -> str:
        return str(free_path(folder, self.stem, self.suffix))


def write_export(export: Export, typed: str, folder: Path) -> str:
    """Write `export` to the path the user typed; say what was written where (an absolute path).
    The default export folder is created when it is missing; any other folder must exist.
    Raises `OSError` (`UnsafePath` says why: a folder, a link, a KB or config file)."""
    path = Path(typed).expanduser().absolute()
    if path.parent == folder.expanduser().absolute():
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise UnsafePath(path, f"could not create the export folder: {exc.strerror or exc}") from None
    return f"{export.write(path)} to {path}"


def answered_elsewhere(run: RunRecord | None, version_now: str | None) -> str:
    """Why `run`'s content may no longer leave the screen, or "": a run answered from another
    version of the caller's view than `version_now` (None: no view is open) may quote a unit that
    a reload has since restricted, withdrawn or edited, and fails closed. The caller's view
    version names no unit, so the refusal cannot tell which."""
    if run is None or not run.events:
        return ""
    started = run.events[0]
    answered_from = started.kb_version if isinstance(started, RunStarted) else None
    if version_now is not None and answered_from == version_now:
        return ""
    return (
        f"run {run.run_id} was answered from an earlier version of your view of the KB "
        "(a reload changed it): re-run it (r) to copy or export"
    )


def trace_export(run: RunRecord | None, protected: Protected) -> Export | str:
    """The trace of `run`, or why there is nothing to save."""
    if run is None or not run.events:
        return "nothing to save yet: ask a question first"
    events = list(run.events)

    def write(path: Path) -> str:
        write_trace(events, path, protected)
        return f"saved {len(events)} events"

    return Export("Save trace (JSON Lines)", f"trace-run{run.run_id}", ".jsonl", write)


def evidence_export(run: RunRecord | None, scored: RetrievalScored | None, protected: Protected) -> Export | str:
    if scored is None or run is None:
        return "no evidence to export yet"
    text = candidates_csv(scored)
    header = text.split("\n", 1)[0].encode() + b"\n"

    def write(path: Path) -> str:
        atomic_write_text(path, text, protected, mode=EXPORT_MODE, ours=lambda marked: marked.head.startswith(header))
        return f"exported {len(scored.candidates)} rows"

    return Export("Export evidence (CSV)", f"evidence-run{run.run_id}", ".csv", write)


def answer_export(run: RunRecord | None, cursor: int, protected: Protected) -> Export | str:
    text = answer_markdown(run.state(cursor)) if run is not None else ""
    if not text or run is None:
        return "no answer to export yet"

    def write(path: Path) -> str:
        atomic_write_text(path, text + ANSWER_MARK, protected, mode=EXPORT_MODE, ours=_marked_answer)
        return "exported the answer"

    return Export("Export answer (Markdown)", f"answer-run{run.run_id}", ".md", write)


def _marked_answer(marked: Marked) -> bool:
    return marked.tail.endswith(ANSWER_MARK.encode())
