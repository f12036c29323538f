"""`mrptui` with no subcommand: open the explorer TUI on `--kb` paths (default: the sample KB)."""

from __future__ import annotations

import argparse
import os
import sys
from functools import partial
from pathlib import Path
from typing import Literal

from mrptui.commands import (
    UsageError,
    add_caller_options,
    add_cluster_options,
    cache_store,
    caller_from_args,
    config_from_args,
    conversation_name,
    kb_paths,
    memory_root,
)

THEMES = ("textual-dark", "textual-light")
# After quit, how long threads still building indexes may take before the process leaves without them.
QUIT_GRACE_SECONDS = 0.5


def add_top_level_arguments(parser: argparse.ArgumentParser) -> None:
    """The explorer is the default command, so its options live on the top-level parser."""
    add_caller_options(parser)
    parser.add_argument(
        "--queries",
        metavar="QUERIES.json",
        default=None,
        help="labelled queries for the eval screen (F4); default: queries.json beside the --kb path "
        "(the bundled sample queries without --kb)",
    )
    parser.add_argument(
        "--session",
        dest="conversation",
        metavar="NAME",
        default=None,
        help="continue the stored conversation NAME (follow-ups use its memory; ctrl+o shows it)",
    )
    parser.add_argument(
        "--theme", default=None, choices=THEMES, help="textual-dark (default) or textual-light; also $MRPTUI_THEME"
    )
    add_cluster_options(parser, top_level=True)


def kb_label(paths: list[str] | None) -> str:
    return ", ".join(paths) if paths else "sample_kb"


def check_configs(config: Path | None) -> None:
    """What `open_session` refuses as a usage error, checked without reading the KB: every config
    file the session reads. The KB itself is read after the explorer paints; a problem found then
    (a path that vanished, an unreadable file) is shown in the app."""
    from core.infra.config import ConfigError, load_engine_config, load_retrieval_config
    from core.infra.embeddings import load_embedding_config
    from core.infra.llm import load_llm_config
    from core.infra.resources import config_dir

    directory = config or config_dir()
    try:
        for load in (load_retrieval_config, load_engine_config, load_llm_config, load_embedding_config):
            load(directory)
    except ConfigError as exc:
        raise UsageError("\n".join(d.format() for d in exc.diagnostics)) from None


def open_later(paths: list[Path], config: Path | None, args: argparse.Namespace, progress):
    """The explorer's opener: runs in its load worker, after the first frame."""
    from mrptui.explorer_session import ExplorerSession

    return ExplorerSession.open(paths or None, config, progress=progress, store=cache_store(args))


def start_pool_helpers() -> None:
    """Start multiprocessing's resource tracker and forkserver, which a cold open's build pool
    (core/store/pool.py) uses. Starting them hands on this process's stderr descriptor, which
    Textual's stand-in for stderr lacks: once the app runs they could not start, and the load
    worker would build every file serially."""
    from multiprocessing import resource_tracker

    from core.infra.lifeline import start_forkserver

    resource_tracker.ensure_running()
    start_forkserver()  # from the main thread: it then dies with this process, not with a thread


def queries_for(args: argparse.Namespace, paths: list[Path]) -> Path | None:
    """F4's labelled queries: --queries, else the `queries.json` of the first KB path that has one
    (inside a KB folder or beside it, beside a KB file), else none: never another KB's questions."""
    if args.queries:
        queries = Path(args.queries)
        if not queries.is_file():
            raise UsageError(f"--queries: no such file: {queries}")
        return queries
    from core.infra.resources import sample_queries_file
    from mrptui.commands.check import QUERIES_FILE_NAME

    if not paths:
        return sample_queries_file()
    # In a KB folder (as sample_kb/ keeps it), else beside the folder or file (as `mrptui init` writes it).
    beside = (
        folder / QUERIES_FILE_NAME
        for path in paths
        for folder in ((path, path.parent) if path.is_dir() else (path.parent,))
    )
    return next((queries for queries in beside if queries.is_file()), None)


def run(args: argparse.Namespace) -> int:
    app = build_app(args)
    start_pool_helpers()
    return run_until_quit(app)


def build_app(args: argparse.Namespace):
    """The explorer as the flags ask for it; a bad flag or config file is a UsageError here, before
    anything is drawn (a cluster that cannot be reached is told in the app: it starts in a worker)."""
    caller = caller_from_args(args)
    paths = kb_paths(args)
    config = config_from_args(args)
    check_configs(config)
    from mrptui.commands.cluster import cluster_config, shard_root

    cluster = cluster_config(args)
    from mrptui.app import ExplorerApp
    from mrptui.cluster_link import ClusterLink
    from mrptui.keymap import KEYMAP_FILE  # Textual loads only when the TUI is really wanted

    theme = args.theme or os.environ.get("MRPTUI_THEME") or "textual-dark"
    keymap: Path | Literal["config"] = config / KEYMAP_FILE if config else "config"
    queries = queries_for(args, paths)
    app = ExplorerApp(
        None,
        caller,
        kb_label(args.kb),
        theme=theme,
        keymap_path=keymap,
        queries_path=queries,
        opener=partial(open_later, paths, config, args),
        conversation=conversation_name(args.conversation),
        memory_root=memory_root(),
        cluster=ClusterLink(cluster, shard_root(args)) if cluster is not None else None,
    )
    app.lifecycle.follow_today = not args.as_of
    return app


def run_until_quit(app) -> int:
    """Run the app. Once it has quit (the terminal is restored), a worker thread may still be
    building indexes (BM25, HDC: seconds on a big KB, not interruptible), and `asyncio.run` would
    wait for it. Give the workers QUIT_GRACE_SECONDS, then leave without them: everything they write
    to the cache is published by atomic rename, so an abandoned write leaves only a temporary file."""
    import asyncio  # here: the CLI imports this module for its options, and `ask` needs neither
    import threading
    from concurrent.futures import ThreadPoolExecutor

    loop = asyncio.new_event_loop()
    workers = ThreadPoolExecutor(thread_name_prefix="mrptui-worker")  # where Textual's thread workers run
    loop.set_default_executor(workers)
    try:
        app.run(loop=loop)
    finally:
        loop.close()
    code = app.return_code or 0
    waiting = threading.Thread(target=workers.shutdown, daemon=True)
    waiting.start()
    waiting.join(QUIT_GRACE_SECONDS)
    if waiting.is_alive():
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code
