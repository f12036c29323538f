"""`mrptui` with no subcommand: open the explorer TUI on `--kb` paths (default: the sample KB)."""

from __future__ import annotations

import argparse
import os

from mrptui.commands import add_caller_options, caller_from_args, config_from_args, open_session

THEMES = ("textual-dark", "textual-light")


def add_top_level_arguments(parser: argparse.ArgumentParser) -> None:
    """The explorer is the default command, so its options live on the top-level parser."""
    add_caller_options(parser)
    parser.add_argument(
        "--theme", default=None, choices=THEMES, help="textual-dark (default) or textual-light; also $MRPTUI_THEME"
    )


def kb_label(paths: list[str] | None) -> str:
    return ", ".join(paths) if paths else "sample_kb"


def run(args: argparse.Namespace) -> int:
    caller = caller_from_args(args)
    session = open_session(args)
    from mrptui.app import KEYMAP_FILE, ExplorerApp  # Textual loads only when the TUI is really wanted

    theme = args.theme or os.environ.get("MRPTUI_THEME") or "textual-dark"
    config = config_from_args(args)
    keymap = config / KEYMAP_FILE if config else "config"
    app = ExplorerApp(session, caller, kb_label(args.kb), theme=theme, keymap_path=keymap)
    app.run()
    return 0
