"""`mrptui cache info|clear`: what the index cache holds, and emptying it."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
from pathlib import Path

from core.infra.terminal_text import terminal_safe
from core.store import cache_root
from core.store.arrays import folder_bytes
from core.store.contents import ClearResult, cache_entries, clear_cache, view_files
from core.store.shared_stems import forget_shared
from core.store.vector_sets import SetInfo, set_infos
from mrptui.commands import UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        choices=("info", "clear"),
        help="info: list cached KB files; clear: remove them and the stems this install stored",
    )


def run(args: argparse.Namespace) -> int:
    root = cache_root(args.cache_dir, args.no_cache)
    if root is None:
        raise UsageError("the index cache is turned off (--no-cache / MRPTUI_NO_CACHE)")
    if args.action == "clear":
        try:
            result = clear_cache(root)
            stems = forget_shared()
            result = ClearResult(result.freed + stems.freed, result.failures + stems.failures)
        except OSError as exc:
            raise UsageError(f"cannot clear the index cache at {root}: {exc.strerror or exc}") from None
        if result.failures:
            return _partly_cleared(root, result)
        print(f"cleared {root}: {_size(result.freed)} freed")
        return 0
    if (why := _unlistable(root)) is not None:
        raise UsageError(f"cannot read the index cache at {why}")
    entries = cache_entries(root)
    for entry in sorted(entries, key=lambda e: e.source):
        written = dt.datetime.fromtimestamp(entry.written).strftime("%Y-%m-%d %H:%M")
        print(f"{_size(entry.bytes):>9}  {written}  {entry.source}")
        sets = set_infos(entry.folder)
        if sets:
            print(f"{'':>9}  vectors: " + ", ".join(_describe(info) for info in sets))
    views = view_files(root)
    if views:
        print(f"{_size(sum(map(folder_bytes, views))):>9}  merged BM25 index(es) of {len(views)} view(s)")
    print(f"{root}: {len(entries)} cached file(s), {_size(sum(e.bytes for e in entries))}")
    return 0


def _unlistable(root: Path) -> str | None:
    """The cache folder that cannot be listed (`folder: reason`), if one can't: a folder the user
    may not read is no empty cache (`info` said "0 cached file(s)" of it)."""
    for folder in (root, root / "segments", root / "views"):
        try:
            os.listdir(folder)
        except FileNotFoundError:
            continue
        except OSError as exc:
            return f"{folder}: {exc.strerror or exc}"
    return None


_FAILURES_SHOWN = 10


def _partly_cleared(root, result: ClearResult) -> int:
    """Never "cleared" when something stayed: each path that did (the first few), and exit 1."""
    print(
        f"mrptui: the index cache at {root} is only partly cleared ({_size(result.freed)} freed); "
        "what is left is rebuilt, not served, on the next open:",
        file=sys.stderr,
    )
    for path, reason in result.failures[:_FAILURES_SHOWN]:
        print(f"  cannot remove {terminal_safe(path)}: {reason}", file=sys.stderr)
    if len(result.failures) > _FAILURES_SHOWN:
        print(f"  and {len(result.failures) - _FAILURES_SHOWN} more", file=sys.stderr)
    return 1


def _describe(info: SetInfo) -> str:
    """`hdc 1.2 MB (40 units)`; dense sets add their dimension: `dense 20 KB (3 units × 384)`."""
    dims = f" × {info.shape[1]}" if info.kind == "dense" and len(info.shape) == 2 else ""
    return f"{info.kind} {_size(info.bytes)} ({info.units} units{dims})"


def _size(count: float) -> str:
    for unit in ("B", "KB", "MB"):
        if count < 1024:
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
    return f"{count:.1f} GB"
