"""What the explorer saves: the trace (JSON Lines), the evidence table (CSV), the answer (Markdown).

Each export is prepared here from the run's state; the app asks for the path and calls `write`,
which writes atomically and refuses folders, devices, links and the session's own KB and config
files (`core.safe_io`, `protected`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.events import RetrievalScored, write_trace
from core.safe_io import Protected, atomic_write_text
from mrptui.state import RunRecord
from mrptui.widgets.answer import answer_markdown
from mrptui.widgets.evidence import candidates_csv


@dataclass(frozen=True)
class Export:
    title: str
    default_path: str
    write: Callable[[Path], str]
    """Writes the file and says what it wrote ("saved 42 events")."""


def trace_export(run: RunRecord | None, protected: Protected) -> Export | str:
    """The trace of `run`, or why there is nothing to save."""
    if run is None or not run.events:
        return "nothing to save yet: ask a question first"
    events = list(run.events)

    def write(path: Path) -> str:
        write_trace(events, path, protected)
        return f"saved {len(events)} events"

    return Export("Save trace (JSON Lines)", f"./mrptui-trace-{run.run_id}.jsonl", write)


def evidence_export(run: RunRecord | None, scored: RetrievalScored | None, protected: Protected) -> Export | str:
    if scored is None or run is None:
        return "no evidence to export yet"
    text = candidates_csv(scored)

    def write(path: Path) -> str:
        atomic_write_text(path, text, protected)
        return f"exported {len(scored.candidates)} rows"

    return Export("Export evidence (CSV)", f"./mrptui-evidence-{run.run_id}.csv", write)


def answer_export(run: RunRecord | None, cursor: int, protected: Protected) -> Export | str:
    text = answer_markdown(run.state(cursor)) if run is not None else ""
    if not text or run is None:
        return "no answer to export yet"

    def write(path: Path) -> str:
        atomic_write_text(path, text, protected)
        return "exported the answer"

    return Export("Export answer (Markdown)", f"./mrptui-answer-{run.run_id}.md", write)
