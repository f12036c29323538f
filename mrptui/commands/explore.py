"""`mrptui` with no subcommand: open the explorer TUI on `--kb` paths (default: the sample KB)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from mrptui.commands import UsageError, add_caller_options, caller_from_args, config_from_args, open_session

THEMES = ("textual-dark", "textual-light")


def add_top_level_arguments(parser: argparse.ArgumentParser) -> None:
    """The explorer is the default command, so its options live on the top-level parser."""
    add_caller_options(parser)
    parser.add_argument(
        "--queries", metavar="QUERIES.json", default=None,
        help="labelled queries for the eval screen (F4); default: the bundled sample queries",
    )
    parser.add_argument(
        "--theme", default=None, choices=THEMES, help="textual-dark (default) or textual-light; also $MRPTUI_THEME"
    )


def kb_label(paths: list[str] | None) -> str:
    return ", ".join(paths) if paths else "sample_kb"


def run(args: argparse.Namespace) -> int:
    caller = caller_from_args(args)
    session = open_session(args)
    from mrptui.app import ExplorerApp
    from mrptui.keymap import KEYMAP_FILE  # Textual loads only when the TUI is really wanted

    theme = args.theme or os.environ.get("MRPTUI_THEME") or "textual-dark"
    config = config_from_args(args)
    keymap = config / KEYMAP_FILE if config else "config"
    queries = Path(args.queries) if args.queries else None
    if queries is not None and not queries.is_file():
        raise UsageError(f"--queries: no such file: {queries}")
    app = ExplorerApp(session, caller, kb_label(args.kb), theme=theme, keymap_path=keymap, queries_path=queries)
    app.run()
    return 0
