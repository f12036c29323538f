"""Subcommands of the `mrptui` CLI, one module each, and the options they share."""

from __future__ import annotations

import argparse
import datetime as dt
import re

from core.units import Caller


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


def add_kb_option(parser: argparse.ArgumentParser) -> None:
    # SUPPRESS keeps a `--kb` given before the subcommand from being reset to None by the subparser.
    parser.add_argument(
        "--kb", action="append", metavar="PATH", default=argparse.SUPPRESS,
        help="KB file or folder (repeatable); default sample_kb/",
    )


def add_caller_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--caller-tags", default="", metavar="A,B", help="ACL tags the caller holds")
    parser.add_argument("--region", default=None, help="the caller's region")
    parser.add_argument("--as-of", default=None, metavar="YYYY-MM-DD", help="view the KB as of this date")


def caller_from_args(args: argparse.Namespace) -> Caller:
    tags = frozenset(t.strip() for t in (args.caller_tags or "").split(",") if t.strip())
    as_of = dt.date.today()
    if args.as_of:
        try:
            as_of = dt.date.fromisoformat(args.as_of)
        except ValueError:
            raise UsageError(f"--as-of must be a date like 2026-05-27, not {args.as_of!r}") from None
    return Caller(tags=tags, region=args.region or None, as_of=as_of)


_SURROGATE = re.compile("[\ud800-\udfff]")


def question_from(text: str) -> str:
    # Bytes in argv that are not UTF-8 arrive as lone surrogates, which no JSON or trace writer
    # can encode: they become U+FFFD here, like undecodable bytes in KB files.
    question = _SURROGATE.sub("\ufffd", text or "").strip()
    if not question:
        raise UsageError("the question is empty")
    return question


def open_session(args: argparse.Namespace):
    """The Session for `--kb` paths (default: the sample KB); bad paths and configs are usage errors."""
    from pathlib import Path

    from core.config import ConfigError
    from core.session import Session

    paths = [Path(p) for p in (getattr(args, "kb", None) or [])]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise UsageError(f"KB path not found: {', '.join(missing)}")
    try:
        return Session.open(paths or None)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
