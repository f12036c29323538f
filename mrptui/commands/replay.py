"""`mrptui replay FILE.jsonl`: step through a saved trace in the explorer, without the engine."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from core.events import RunStarted, read_trace
from mrptui.commands import UsageError, add_caller_options, add_config_option, add_kb_option, caller_from_args, open_session
from mrptui.state import describe_caller


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("trace", metavar="FILE.jsonl", help="a trace saved with `s` in the explorer or `ask --trace`")
    add_kb_option(parser)
    add_config_option(parser)
    add_caller_options(parser, keep_top_level=True)
    parser.epilog = (
        "With --kb, unit text is looked up in that KB as the caller the flags name (--caller-tags, --region, "
        "--as-of; default the public caller), never as the caller the trace records; without it, ids only."
    )


def load(path: Path):
    """The trace's events, or a UsageError naming the first error (file:line).

    A trace cut off mid-event replays the events before the cut; the warning saying where it
    stops goes to stderr.
    """
    if not (path.exists() or path.is_symlink()):
        raise UsageError(f"trace file not found: {path}")
    events, problems = read_trace(path)
    errors = [problem for problem in problems if problem.is_error]
    if errors:
        raise UsageError(f"{errors[0].format()}" + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""))
    if not events:
        raise UsageError(f"{path}: the trace has no events")
    for problem in problems:
        print(f"mrptui: {problem.format()}", file=sys.stderr)
    return events


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
    events = load(path)
    session = open_session(args) if getattr(args, "kb", None) else None
    from mrptui.app import ExplorerApp  # Textual loads only when the TUI is really wanted

    theme = os.environ.get("MRPTUI_THEME") or "textual-dark"
    recorded = recorded_for(events)
    label = f"replay {path.name} · recorded for the {recorded}"
    app = ExplorerApp(session, caller, label, theme=theme, replay=events, recorded_for=recorded)
    app.run()
    return 0
