"""`mrptui ask QUESTION`: run the whole engine and print the answer (or the JSON contract)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from core.events import write_trace
from core.plugins.base import RegistryError, Request
from core.summary import summarise
from mrptui.commands import (
    UsageError,
    add_caller_options,
    add_session_options,
    caller_from_args,
    exit_code,
    open_session,
    question_from,
    warn_health,
)

# Legacy processing modes and retrieval profiles map onto plugin pins (seed 003).
MODES = {
    "symbolic-only": {"sd": "sd-symbolic", "gs": "gs-symbolic"},
    "llm-assisted": {"sd": "sd-llm-fast", "gs": "gs-llm-fast"},
}
PROFILES = {"fast": "kb-fast", "balanced": "kb-balanced", "thinkingdb": "kb-thinkingdb"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("question")
    add_session_options(parser)
    parser.add_argument("--planner", metavar="ID", help="planner to start with (planner-default, planner-depth)")
    parser.add_argument("--sd", metavar="ID", help="pin a seed detector")
    parser.add_argument("--kb-plugin", metavar="ID", help="pin a kb plugin")
    parser.add_argument("--gs", metavar="ID", help="pin a goal solver")
    parser.add_argument("--val", metavar="ID", help="pin a validator")
    parser.add_argument("--exclude", action="append", default=[], metavar="ID", help="leave a plugin out (repeatable)")
    parser.add_argument("--mode", choices=sorted(MODES), help="legacy mode: pins sd and gs")
    parser.add_argument("--profile", choices=sorted(PROFILES), help="legacy retrieval profile: pins the kb plugin")
    add_caller_options(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object (see README)")
    parser.add_argument("--trace", metavar="FILE.jsonl", help="save the run's events as JSON Lines")


def request_from(args: argparse.Namespace) -> Request:
    pins: dict[str, str] = dict(MODES.get(args.mode, {}))
    if args.profile:
        pins["kb"] = PROFILES[args.profile]
    for stage, value in (("sd", args.sd), ("kb", args.kb_plugin), ("gs", args.gs), ("val", args.val)):
        if value:
            pins[stage] = value
    return Request(
        question=question_from(args.question),
        caller=caller_from_args(args),
        pins=pins,
        excluded=frozenset(args.exclude),
        planner=args.planner,
    )


def run(args: argparse.Namespace) -> int:
    request = request_from(args)
    trace_path = Path(args.trace) if args.trace else None
    if trace_path is not None and not trace_path.parent.exists():
        raise UsageError(f"--trace folder does not exist: {trace_path.parent}")
    session = open_session(args)
    health = warn_health(session)
    try:
        session.check_request(request)
    except RegistryError as exc:
        raise UsageError(str(exc)) from None
    events = list(session.run(request))
    if trace_path is not None:
        write_trace(events, trace_path)
    summary = summarise(events)
    if args.json:
        print(json.dumps({**summary, "diagnostics": health.model_dump()}, indent=2, ensure_ascii=False))
    else:
        print(_text(summary))
    return exit_code(0, health, args)


def _text(summary: dict) -> str:
    lines = [summary["answer"], "", f"status: {summary['status']}"]
    if summary["citations"]:
        lines.append(f"cited: {', '.join(summary['citations'])}")
    path = " → ".join(f"{a['plugin']} {a['status']}" for a in summary["attempts"])
    lines.append(f"path: {path}")
    for b in summary["backtracks"]:
        lines.append(f"backtrack L{b['level']} ({b['stage']}): {b['reason']}")
    return "\n".join(lines)
