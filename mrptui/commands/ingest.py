"""`mrptui ingest FILE`: print the units a plain-text file becomes, in the Markdown unit format."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.cnl import Format, question_lines, read_file, to_markdown
from core.infra.diagnostics import Code

# Problems with the file itself, rather than its text: nothing could be ingested. (An undecodable
# byte is not one: it is replaced, reported at its line, and the rest is ingested.)
_FILE_PROBLEMS = frozenset({Code.PATH_NOT_FOUND, Code.FILE_UNREADABLE, Code.FILE_TOO_LARGE, Code.BINARY_FILE})


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="a plain-text file (read as plain text whatever its extension)")


def run(args: argparse.Namespace) -> int:
    units, diagnostics = read_file(Path(args.file), kind=Format.TEXT)
    for diagnostic in diagnostics:
        print(diagnostic.format(), file=sys.stderr)
    if any(d.code in _FILE_PROBLEMS for d in diagnostics):
        return 2
    # The file read cleanly above, so reading it again for the question count cannot fail differently.
    skipped = question_lines(Path(args.file).read_text(encoding="utf-8", errors="replace"))
    note = f"# skipped: {skipped} question lines\n" if skipped else ""
    sys.stdout.write(f"# Units from {args.file}\n{note}\n{to_markdown(units)}")
    return 1 if any(d.is_error for d in diagnostics) else 0
