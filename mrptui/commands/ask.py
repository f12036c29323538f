"""`mrptui ask QUESTION`: run the whole engine and print the answer (or the JSON contract)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from core.infra.safe_io import Protected, UnsafePath, check_target
from core.kernel.contract import RegistryError, Request
from core.kernel.events import is_trace, names_engine_budget, write_trace
from core.kernel.summary import summarise
from mrptui.commands import (
    UsageError,
    add_caller_options,
    add_cluster_options,
    add_session_options,
    cache_folder,
    caller_from_args,
    conversation_name,
    exit_code,
    open_conversation,
    question_from,
    warn_health,
    warn_memory,
)
from mrptui.commands.cluster import cluster_config, session_on_cluster

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
    parser.add_argument("--kb-plugin", metavar="ID", help="use only this kb plugin (the others are left out)")
    parser.add_argument("--gs", metavar="ID", help="pin a goal solver")
    parser.add_argument("--val", metavar="ID", help="pin a validator")
    parser.add_argument("--exclude", action="append", default=[], metavar="ID", help="leave a plugin out (repeatable)")
    parser.add_argument("--mode", choices=sorted(MODES), help="legacy mode: pins sd and gs")
    parser.add_argument("--profile", choices=sorted(PROFILES), help="legacy retrieval profile: pins the kb plugin")
    add_caller_options(parser, keep_top_level=True)
    parser.add_argument("--json", action="store_true", help="print one JSON object (see README)")
    parser.add_argument(
        "--session",
        metavar="NAME",
        help="continue the stored conversation NAME: follow-ups ('it', 'And X?') use its memory",
    )
    parser.add_argument("--trace", metavar="FILE.jsonl", help="save the run's events as JSON Lines")
    add_cluster_options(parser)
    parser.add_argument(
        "--step",
        action="store_true",
        help="debug in the terminal: hold after every event and read n/c/g/x/p/q from stdin",
    )
    parser.add_argument(
        "--break",
        dest="breaks",
        action="append",
        default=[],
        metavar="SPEC",
        help="hold at a breakpoint: a stage (kb), STAGE:PLUGIN, a plugin id, backtrack, costly, call",
    )


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
    cluster_config(args)  # a bad --cluster or --shards costs nothing: checked before the KB opens
    conversation_name(args.session)  # a bad --session name costs nothing: checked before the KB opens
    trace_path = Path(args.trace) if args.trace else None
    # Checked before the run, so a bad path costs nothing and leaves nothing behind.
    _check_trace_path(trace_path, None)
    # Every answer tags its question: the tagger's data loads while the session opens.
    from core.nlp import preload

    preload(cache_folder(args))
    with session_on_cluster(args) as (session, cluster):
        return _answer(args, request, session, trace_path, cluster)


def _answer(args: argparse.Namespace, request: Request, session, trace_path: Path | None, cluster) -> int:
    _check_trace_path(trace_path, session.owns_file)
    health = warn_health(session, request.caller)
    if args.kb_plugin:  # only this kb plugin answers: the others are no fallback
        others = frozenset(session.plugin_ids().get("kb", ())) - {args.kb_plugin}
        request = dataclasses.replace(request, excluded=request.excluded | others)
    try:
        session.check_request(request)
    except RegistryError as exc:
        raise UsageError(str(exc)) from None
    conversation = open_conversation(session, request.caller, args.session) if args.session is not None else None
    if conversation is not None:
        # Only --session needs memory: its modules (HDC encoding, the tagger) cost a plain ask ~20 ms.
        from core.memory.turns import remember, with_memory

        request = with_memory(request, conversation, session.view(request.caller))
    if args.step or args.breaks:
        # Stepping pulls in the TUI's run-control state; a plain ask never needs it.
        from mrptui.commands.step import Stepper, parse_break

        breakpoints = {parse_break(spec) for spec in args.breaks}
        for point in breakpoints:
            # A plugin (or planner) no run has would never hold: a typo would silently run through.
            if point.kind == "plugin" and point.value not in session.engine.planners:
                try:
                    session.registry.get(point.value)
                except RegistryError as exc:
                    raise UsageError(f"--break {point.value!r}: {exc}") from None
        events = Stepper(session, request, breakpoints, step=args.step, read=input, out=sys.stderr).run()
    else:
        events = list(session.run(request))
    if conversation is not None:
        remember(conversation, events, session.view(request.caller))
    summary = summarise(events)
    if args.json:
        # With --cluster: the cluster, and per shard the ms its tasks ran on their workers.
        shards = {"cluster": cluster()} if cluster is not None else {}
        print(json.dumps({**summary, "diagnostics": health.model_dump(), **shards}, indent=2, ensure_ascii=False))
    else:
        print(_text(summary))
    if conversation is not None:
        warn_memory(conversation)  # after the answer: a memory file that failed never costs it
    if trace_path is not None:
        # After the answer too: a trace that cannot be written (a full disk) fails the command
        # (exit 2), but the answer the run found is still printed first.
        try:
            write_trace(events, trace_path, session.owns_file)
        except UnsafePath as exc:
            raise UsageError(f"--trace {exc}") from None
    return exit_code(0, health, args)


def _check_trace_path(path: Path | None, protected: Protected | None) -> None:
    """Before the KB opens only what the path is; then (`protected` given) also whose file it is:
    the session's own files say so first, a file that is not a trace is never replaced."""
    if path is None:
        return
    try:
        check_target(path, protected, is_trace if protected is not None else None)
    except UnsafePath as exc:
        raise UsageError(f"--trace {exc}") from None


def _step(attempt: dict) -> str:
    said = f"{attempt['plugin']} {attempt['status']}"
    return f"{said} [{attempt['reason']}]" if names_engine_budget(attempt["reason"]) else said


def _text(summary: dict) -> str:
    lines = [summary["answer"], "", f"status: {summary['status']}"]
    if summary["citations"]:
        lines.append(f"cited: {', '.join(summary['citations'])}")
    # Candidates that were not called (skipped, not reached) stay in --json; the path is what ran,
    # with the reason of a call a budget stopped or refused, as the answer says a closure's stop.
    path = " → ".join(_step(a) for a in summary["attempts"] if a["status"] != "skipped")
    lines.append(f"path: {path}")
    for note in summary["incomplete"]:  # a shard of the cluster was silent: the answer is not complete
        lines.append(f"incomplete: {note}")
    for note in summary["budget_stops"]:
        lines.append(f"budget: {note}; the answer may be incomplete")
    for note in summary["resolved"]:
        lines.append(f"from memory: {note}")
    for note in summary["unresolved"]:
        lines.append(f"memory: {note}")
    for note in summary["memory_withheld"]:
        lines.append(f"memory {note}")
    for b in summary["backtracks"]:
        lines.append(f"backtrack L{b['level']} ({b['stage']}): {b['reason']}")
    return "\n".join(lines)
