"""`mrptui` entry point: the TUI by default, and headless subcommands for scripts and checks."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import functools
import gc
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from importlib import import_module
from importlib.util import find_spec

# Before anything imports numpy: its OpenBLAS starts a spinning thread per core at import (~70 ms of
# CPU per run on 2 cores), and nothing here does BLAS work large enough to gain from threads.
# setdefault: a user's own setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# Nor does mrptui use pydantic's plugins (observability hooks found through installed packages'
# entry points): looking for them at the first model reads every installed package's metadata,
# ~1% of a warm `mrptui ask`'s instructions (cachegrind, issue 41) and ~50 files opened. A user
# who wants a plugin sets the variable (empty: every plugin).
os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")

from core.infra import cancel, collector, leases

# mrptui.commands (pydantic, the unit models) is imported by the functions that use it, inside
# `main`, so that its imports run with main's rarer collections (`_fewer_collections`).

# Each subcommand lives in mrptui/commands/<name>.py with `add_arguments(parser)` and `run(args)`.
SUBCOMMANDS = {
    "check": "validate KB units and rule files; print file:line:col: CODE message",
    "ingest": "print the units a plain-text file becomes, in the Markdown unit format",
    "retrieve": "run one kb plugin directly and show its scored candidates",
    "ask": "run the whole engine on a question",
    "eval": "evaluate retrieval and answers against labelled queries",
    "replay": "open a saved trace (JSON Lines) in the explorer",
    "cache": "show or clear the index cache (segments of parsed and tokenised KB files)",
    "memory": "list, add, forget or clear conversation memory and durable notes (per caller)",
    "init": "create a new KB folder with one example unit per format, a rules file and a labelled question",
}
# Commands that open the explorer, which draws every text itself.
TUI_COMMANDS = frozenset({"explore", "replay"})


def build_parser() -> argparse.ArgumentParser:
    """The whole parser. A subcommand's own arguments are added when the parse reaches its name
    (`_LazySubcommands`), so one command's run imports its module only, not every command's (and
    what they import: evaluation, checks, …); `--help` lists them all from `SUBCOMMANDS`."""
    from mrptui.commands import add_config_option, explore

    parser = argparse.ArgumentParser(prog="mrptui", description="Explore why an MRP-VM engine answers as it does.")
    parser.add_argument(
        "--kb", action="append", metavar="PATH", help="KB file or folder (repeatable); default sample_kb/"
    )
    add_config_option(parser, top_level=True)
    explore.add_top_level_arguments(parser)
    parser.add_argument("--cache-dir", metavar="DIR", help="index cache folder (default: $XDG_CACHE_HOME/mrptui)")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the index cache")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", action=_LazySubcommands)
    for name, help_text in SUBCOMMANDS.items():
        if _command_available(name):
            sub.add_parser(name, help=help_text, description=help_text)
    return parser


class _LazySubcommands(argparse._SubParsersAction):
    """Subcommand parsers that get their arguments (`mrptui/commands/<name>.py`'s
    `add_arguments`) when the parse picks them: argparse itself decides which word is the command,
    so an option's value that looks like a command name is never taken for one."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._filled: set[str] = set()

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        name = values[0]
        if name in self._name_parser_map and name not in self._filled:
            _command_module(name).add_arguments(self._name_parser_map[name])
            self._filled.add(name)
        super().__call__(parser, namespace, values, option_string)


def _command_guess(words: Sequence[str]) -> str | None:
    """The first word that names a subcommand (None: the explorer); an option's value may only
    look like one. Only picks the collector's pace (`main`); the parse decides the command."""
    return next((word for word in words if word in SUBCOMMANDS), None)


def _command_available(name: str) -> bool:
    """Whether this build ships the command's module, found without importing it."""
    return find_spec(f"mrptui.commands.{name}") is not None


def _command_module(name: str):
    try:
        return import_module(f"mrptui.commands.{name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"mrptui.commands.{name}":
            return None
        raise


def _on_interrupt(signum: int, frame: object) -> None:
    cancel.note_interrupt()
    raise KeyboardInterrupt


@contextlib.contextmanager
def _interrupts_remembered() -> Iterator[None]:
    """Ctrl+C raises KeyboardInterrupt as before and is also remembered for the kernel, which
    polls it (core/infra/cancel.py says why); the previous handler is back when `main` returns."""
    # Only Python's own handler is replaced: an ignored SIGINT (nohup, a background job) stays ignored.
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    previous = signal.signal(signal.SIGINT, _on_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        cancel.clear_interrupt()


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    command = _command_guess(words)
    young = YOUNG_COLLECTION_EVERY if command is None or command in TUI_COMMANDS else ONE_SHOT_YOUNG_COLLECTION_EVERY
    with _interrupts_remembered(), _fewer_collections(young):
        return _main(words)


# The imports leave ~45k long-lived objects (pydantic's schemas, numpy, the engine's modules) that
# every pass of the cyclic collector over the older generations walks again: at Python's default
# of a young pass per 700 allocations an `mrptui ask` spent ~0.01 CPU s in them, and the passes
# of the interpreter's shutdown ~0.04 (of ~0.35). A young generation of 20,000 holds at most a few
# MB of cyclic garbage between passes; the passes themselves are unchanged.
YOUNG_COLLECTION_EVERY = 20_000
# A command other than the explorer has no frames to keep smooth, only its total time: a warm
# `mrptui ask` on the sample KB holds 75-100k more objects at its end than at its start (imports,
# models, the KB), and walking them in young passes of 20,000 cost ~0.016 CPU s of its ~0.3.
# Few of its objects are garbage in cycles (~1,000 collected at its end, ~1,500 after `eval` of
# the sample's 63 questions), so waiting longer between passes holds little more memory.
ONE_SHOT_YOUNG_COLLECTION_EVERY = 200_000


@contextlib.contextmanager
def _fewer_collections(young: int) -> Iterator[None]:
    """Young collections every `young` allocations while `main` runs, and at the
    process's exit every object left is frozen, so the exit frees them without a last walk of them
    all: what is not in a cycle is freed by its reference count as before, cycles are left to the
    OS (their finalizers do not run; `weakref.finalize` callbacks, as core/store/mapped.py's,
    still do: registered later, they run before the freeze)."""
    _freeze_at_exit()
    previous = gc.get_threshold()
    gc.set_threshold(max(previous[0], young), *previous[1:])
    try:
        yield
    finally:
        collector.promote_young()
        gc.set_threshold(*previous)


@functools.cache
def _freeze_at_exit() -> None:
    atexit.register(gc.freeze)


def _main(words: list[str]) -> int:
    args = build_parser().parse_args(words)
    # Here, in the main thread: the explorer opens its session in a worker, where no handler can be set.
    leases.arm()
    command = args.command or "explore"
    if command in TUI_COMMANDS:
        return _run(command, args)
    with _terminal_safe_output():
        return _run(command, args)


@contextlib.contextmanager
def _terminal_safe_output() -> Iterator[None]:
    """What a plain command prints (answers, reasons, file names) reaches the terminal with its
    control and escape characters escaped (mrptui/terminal_text.py). The explorer draws text
    itself and is left alone."""
    from mrptui.terminal_text import SafeStream

    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(stdout), SafeStream(stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = stdout, stderr


def _run(command: str, args: argparse.Namespace) -> int:
    from mrptui.commands import UsageError

    try:
        module = _command_module(command)
        if module is None:
            raise UsageError(f"the {command!r} command is not available in this build")
        return module.run(args)
    except UsageError as exc:
        # One problem a line (e.g. every error of a queries file), each with its file:line.
        for line in str(exc).splitlines() or [""]:
            print(f"mrptui: error: {line}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away: stop quietly, and keep Python's exit-time flush
        # of stdout from raising again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, never a traceback
        if os.environ.get("MRPTUI_DEBUG"):
            raise
        print(f"mrptui: internal error: {type(exc).__name__}: {exc} (set MRPTUI_DEBUG=1 for details)", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
