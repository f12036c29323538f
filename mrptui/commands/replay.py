"""`mrptui replay FILE.jsonl`: step through a saved trace in the explorer, without the engine."""

from __future__ import annotations

import argparse
import datetime as dt
import os
from pathlib import Path

from core.events import RunStarted, read_trace
from core.units import Caller
from mrptui.commands import UsageError, add_config_option, add_kb_option, open_session


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", metavar="FILE.jsonl", help="a trace saved with `s` in the explorer or `ask --trace`")
    add_kb_option(parser)
    add_config_option(parser)
    parser.epilog = "With --kb, unit text is looked up in that KB (as the trace's caller); without it, ids only."


def load(path: Path):
    """The trace's events, or a UsageError naming the first problem (file:line)."""
    if not path.is_file():
        raise UsageError(f"trace file not found: {path}")
    events, problems = read_trace(path)
    if problems:
        raise UsageError(f"{problems[0].format()}" + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))
    if not events:
        raise UsageError(f"{path}: the trace has no events")
    return events


def trace_caller(events) -> Caller:
    """The caller who ran the trace, so unit text is shown only as they could see it."""
    first = events[0]
    if not isinstance(first, RunStarted):
        return Caller()
    try:
        as_of = dt.date.fromisoformat(first.as_of)
    except ValueError:
        as_of = dt.date.today()
    return Caller(tags=frozenset(first.caller_tags), region=first.caller_region, as_of=as_of)


def run(args: argparse.Namespace) -> int:
    path = Path(args.trace)
    events = load(path)
    session = open_session(args) if getattr(args, "kb", None) else None
    from mrptui.app import ExplorerApp  # Textual loads only when the TUI is really wanted

    theme = os.environ.get("MRPTUI_THEME") or "textual-dark"
    label = f"replay {path.name}"
    app = ExplorerApp(session, trace_caller(events), label, theme=theme, replay=events)
    app.run()
    return 0
