"""`mrptui replay FILE.jsonl`: step through a saved trace in the explorer, without the engine."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from core.infra.diagnostics import Diagnostic
from core.kernel.events import RunStarted, read_trace
from mrptui.commands import (
    UsageError,
    add_caller_options,
    add_config_option,
    add_kb_option,
    caller_from_args,
    open_session,
    unreachable,
)
from mrptui.session_seam import describe_caller


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", metavar="FILE.jsonl", help="a trace saved with `s` in the explorer or `ask --trace`")
    add_kb_option(parser)
    add_config_option(parser)
    add_caller_options(parser, keep_top_level=True)
    parser.epilog = (
        "With --kb, unit text is looked up in that KB as the caller the flags name (--caller-tags, --region, "
        "--as-of; default the public caller), never as the caller the trace records; without it, ids only."
    )


def load(path: Path) -> tuple[list, str]:
    """The trace's events up to its first bad line, and a note saying where it stops ("" when
    every line read). Only a trace with no event before its first bad line (or an unreadable,
    oversized file) is a UsageError naming file:line."""
    if (why := unreachable(path)) is not None:
        raise UsageError(f"trace file not found: {path}" if why == "no such file or directory" else f"{path}: {why}")
    events, problems = read_trace(path, stop_at_bad_line=True)
    if not events:
        if problems and problems[0].is_error:
            raise UsageError(problems[0].format())
        cut = f" (line {problems[0].line} is cut mid-event)" if problems else ""
        raise UsageError(f"{path}: the trace has no complete event to replay{cut}")
    note = stop_note(problems[-1], len(events)) if problems else ""
    if note:
        print(f"mrptui: {problems[-1].format()}", file=sys.stderr)
    return events, note


def stop_note(problem: Diagnostic, events: int) -> str:
    """Where a replay stops and why, for the status line: the line that could not be read."""
    count = "the 1" if events == 1 else f"the {events}"
    if problem.is_error:
        return f"trace line {problem.line} is not a trace event: replaying {count} event{'s' * (events != 1)} before it"
    return (
        f"trace line {problem.line} is cut mid-event: replaying {count} complete event{'s' * (events != 1)} before it"
    )


def recorded_for(events) -> str:
    """Who the trace says it ran for: shown as a record, never used to read the KB (a trace is
    only a file, and anyone can write one naming a privileged caller)."""
    first = events[0]
    if not isinstance(first, RunStarted):
        return "an unknown caller"
    return describe_caller(first.caller_tags, first.caller_region, first.as_of)


def run(args: argparse.Namespace) -> int:
    path = Path(args.trace)
    caller = caller_from_args(args)
    events, note = load(path)
    session = open_session(args) if getattr(args, "kb", None) else None
    from mrptui.app import ExplorerApp  # Textual loads only when the TUI is really wanted

    theme = os.environ.get("MRPTUI_THEME") or "textual-dark"
    recorded = recorded_for(events)
    label = f"replay {path.name} · recorded for the {recorded}"
    app = ExplorerApp(session, caller, label, theme=theme, replay=events, recorded_for=recorded, replay_note=note)
    app.run()
    return 0
