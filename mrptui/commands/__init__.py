"""Subcommands of the `mrptui` CLI, one module each, and the options they share."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from core.units import Caller
from mrptui.caller_text import CallerError, parse_caller

if TYPE_CHECKING:
    from core.kb.health import Health


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


def add_kb_option(parser: argparse.ArgumentParser) -> None:
    # SUPPRESS keeps a `--kb` given before the subcommand from being reset to None by the subparser.
    parser.add_argument(
        "--kb",
        action="append",
        metavar="PATH",
        default=argparse.SUPPRESS,
        help="KB file or folder (repeatable); default sample_kb/",
    )


def add_config_option(parser: argparse.ArgumentParser, *, top_level: bool = False) -> None:
    # As with --kb: given before the subcommand, the subparser must not reset it.
    parser.add_argument(
        "--config",
        metavar="DIR",
        default=None if top_level else argparse.SUPPRESS,
        help="config folder (engine, retrieval, thinkingdb, llm, keymap .json); default $MRPTUI_CONFIG, else config/",
    )


def add_cluster_options(parser: argparse.ArgumentParser, *, top_level: bool = False) -> None:
    """--cluster, --shards, --shard-dir (mrptui/commands/cluster.py reads them): here, not there,
    so the explorer's top-level parser adds them without importing that module for every command."""
    # As with --kb: the explorer's, given before a subcommand, are not reset by the subcommand's.
    default = None if top_level else argparse.SUPPRESS
    parser.add_argument(
        "--cluster",
        metavar="local:N|ADDRESS",
        default=default,
        help="search the KB's shards on a Dask cluster: local:N starts N worker processes for this command",
    )
    parser.add_argument(
        "--shards",
        type=int,
        metavar="N",
        default=default,
        help="shards to cut the KB into (default: cluster.json's shards, docs/scale.md)",
    )
    parser.add_argument(
        "--shard-dir",
        metavar="DIR",
        default=default,
        help="where the shards are cut (every worker must read it); default: the index cache's shards/",
    )


def add_session_options(parser: argparse.ArgumentParser) -> None:
    """--kb, --config and --strict: what every command that opens a session takes."""
    add_kb_option(parser)
    add_config_option(parser)
    parser.add_argument("--strict", action="store_true", help="exit 1 when the KB, rules or plugins have any error")


def config_from_args(args: argparse.Namespace) -> Path | None:
    """`--config DIR`, checked to be a folder; None means $MRPTUI_CONFIG or the bundled config."""
    value = getattr(args, "config", None)
    if not value:
        return None
    path = Path(value)
    if not path.is_dir():
        raise UsageError(f"--config must be a folder holding the config .json files: {path}")
    return path


def add_caller_options(parser: argparse.ArgumentParser, *, keep_top_level: bool = False) -> None:
    """`keep_top_level`: for a subcommand whose flags may also come before it (`mrptui --region US
    replay …`); SUPPRESS keeps the subparser from resetting them to their defaults."""

    def default(value: str | None) -> str | None:
        return argparse.SUPPRESS if keep_top_level else value

    parser.add_argument("--caller-tags", default=default(""), metavar="A,B", help="ACL tags the caller holds")
    parser.add_argument("--region", default=default(None), help="the caller's region")
    parser.add_argument("--as-of", default=default(None), metavar="YYYY-MM-DD", help="view the KB as of this date")


def caller_from_args(args: argparse.Namespace) -> Caller:
    """The caller the flags name; a tag or region that is not allowed is a usage error.

    `--caller-tags` is split on commas and each tag stripped of surrounding spaces; anything else
    (an inner space, "|", an invisible or non-NFKC character) is refused, never repaired.
    """
    try:
        return parse_caller(
            getattr(args, "caller_tags", "") or "",
            getattr(args, "region", None),
            getattr(args, "as_of", None),
            dt.date.today(),
        )
    except CallerError as exc:
        if exc.field == "as_of":
            raise UsageError(f"--as-of must be a date like 2026-05-27, not {exc.messages[0]!r}") from None
        raise UsageError("; ".join(f"--caller-tags/--region: {msg}" for msg in exc.messages)) from None


_SURROGATE = re.compile("[\ud800-\udfff]")


def question_from(text: str) -> str:
    # Bytes in argv that are not UTF-8 arrive as lone surrogates, which no JSON or trace writer
    # can encode: they become U+FFFD here, like undecodable bytes in KB files.
    question = _SURROGATE.sub("\ufffd", text or "").strip()
    if not question:
        raise UsageError("the question is empty")
    return question


def unreachable(path: Path) -> str | None:
    """Why `path` cannot be named at all ("no such file or directory", "Permission denied" for a
    folder above it that cannot be searched), or None. A dangling link is reachable: its reader
    reports it. `Path.exists` raises for the second, which reached the user as an internal error."""
    try:
        os.lstat(path)
    except FileNotFoundError:
        return "no such file or directory"
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def kb_paths(args: argparse.Namespace) -> list[Path]:
    """The `--kb` paths (empty: the sample KB); one that does not exist is a usage error."""
    paths = [Path(p) for p in (getattr(args, "kb", None) or [])]
    problems = {str(p): why for p in paths if (why := unreachable(p)) is not None}
    if any(why != "no such file or directory" for why in problems.values()):
        raise UsageError("KB path cannot be read: " + ", ".join(f"{p} ({why})" for p, why in problems.items()))
    if problems:
        raise UsageError(f"KB path not found: {', '.join(problems)}")
    return paths


# Every file a config folder may hold (docs: README "Configuration").
CONFIG_FOLDER_FILES = (
    "engine.json",
    "retrieval.json",
    "thinkingdb.json",
    "llm.json",
    "embeddings.json",
    "cluster.json",
    "keymap.json",
)


def warn_config_folder(folder: Path | None) -> None:
    """`--config DIR` holding none of the config files runs the bundled config, the sample KB's
    rules included, with nothing said: most often the rules were saved under another name."""
    if folder is None or any(os.path.lexists(folder / name) for name in CONFIG_FOLDER_FILES):
        return
    unread = "".join(f"; {path.name} is not read{_config_name_hint(path)}" for path in sorted(folder.glob("*.json")))
    print(
        f"mrptui: warning: --config {folder} holds none of {', '.join(CONFIG_FOLDER_FILES)}: the bundled "
        f"config runs, its rules included (a rules file is named thinkingdb.json){unread}",
        file=sys.stderr,
    )


def _config_name_hint(path: Path) -> str:
    # By the names without `.json`, which every candidate shares and would make alike. Imported
    # here: the diagnostics' models are not built on a command's usual path.
    from core.infra.diagnostics import did_you_mean

    return did_you_mean(path.stem, CONFIG_FOLDER_FILES, key=lambda name: name.removesuffix(".json"))


def open_session(args: argparse.Namespace):
    """The Session for `--kb` paths (default: the sample KB); bad paths and configs are usage errors."""
    from core.infra.config import ConfigError
    from core.kernel.session import Session

    paths = kb_paths(args)
    config = config_from_args(args)
    warn_config_folder(config)
    try:
        return Session.open(paths or None, config, store=cache_store(args))
    except ConfigError as exc:
        raise UsageError("\n".join(d.format() for d in exc.diagnostics)) from None


def cache_store(args: argparse.Namespace):
    """The index store `--no-cache` / `--cache-dir` name, else the environment's. Passed down to
    the session, never written into `os.environ`: one process running several commands (tests, an
    embedding program) must not carry one command's cache into the next."""
    from core.store import store_at

    return store_at(cache_folder(args))


def cache_folder(args: argparse.Namespace) -> Path | None:
    """The cache folder `--no-cache` / `--cache-dir` name, else the environment's (None: off)."""
    from core.store import cache_root

    return cache_root(getattr(args, "cache_dir", None), getattr(args, "no_cache", False))


def memory_root() -> Path:
    """`$MRPTUI_MEMORY_DIR`, else `$XDG_DATA_HOME/mrptui/memory` (docs/memory.md)."""
    from core.memory.store import default_root

    return Path(os.environ["MRPTUI_MEMORY_DIR"]) if os.environ.get("MRPTUI_MEMORY_DIR") else default_root()


def conversation_name(name: str | None) -> str | None:
    """`--session NAME`, checked before anything is read: a bad name is a usage error."""
    if name is None:  # a plain ask: conversation memory is not even imported
        return None
    from core.memory.store import MemoryNameError, check_name

    try:
        return check_name(name)
    except MemoryNameError as exc:
        raise UsageError(f"--session: {exc}") from None


def open_conversation(session, caller: Caller, name: str | None):
    """The caller's stored conversation `name` (None: the user's notes only)."""
    from core.memory.conversation import Conversation
    from core.memory.store import MemoryStore

    config = session.engine_config.memory
    return Conversation(
        caller, conversation_name(name), config, session.retrieval.hdc, MemoryStore(memory_root(), config)
    )


def warn_memory(conversation) -> None:
    """Print what memory could not read or write since the last call, one line each on stderr
    (the command's own result stands)."""
    for line in conversation.take_warnings():
        print(f"mrptui: warning: {line}", file=sys.stderr)


def warn_health(session, caller) -> Health:
    """Print the session's one-line diagnostics summary on stderr when anything has errors, and
    what the index cache reported (a cache that cannot be written is otherwise silent: every
    command still answers, only slower). `caller`: counted for that caller's view only (None:
    the whole KB, for author surfaces)."""
    health = session.health(caller)
    if health.summary:
        print(f"mrptui: warning: {health.summary}", file=sys.stderr)
    for note in health.cache_notes:
        print(f"mrptui: warning: {note}", file=sys.stderr)
    return health


def exit_code(code: int, health, args: argparse.Namespace) -> int:
    """`--strict` turns any KB, rules or plugin error into exit 1 (worse codes stay)."""
    if code == 0 and getattr(args, "strict", False) and health.errors:
        return 1
    return code
