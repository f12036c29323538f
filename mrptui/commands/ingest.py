"""`mrptui ingest FILE`: print the units a plain-text file becomes, in the Markdown unit format."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.cnl import SUFFIX_FORMATS, Format, detect_format, question_lines, read_file, to_markdown
from core.infra.diagnostics import Code
from mrptui.commands import UsageError

# Problems with the file itself, rather than its text: nothing could be ingested. (An undecodable
# byte is not one: it is replaced, reported at its line, and the rest is ingested.)
_FILE_PROBLEMS = frozenset({Code.PATH_NOT_FOUND, Code.FILE_UNREADABLE, Code.FILE_TOO_LARGE, Code.BINARY_FILE})


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file",
        metavar="FILE",
        help="a plain-text file (any extension; a Markdown-unit, SOP or JSON Lines file of units is refused)",
    )


def run(args: argparse.Namespace) -> int:
    units, diagnostics = read_file(Path(args.file), kind=Format.TEXT)
    if any(d.code in _FILE_PROBLEMS for d in diagnostics):
        for diagnostic in diagnostics:
            print(diagnostic.format(), file=sys.stderr)
        return 2
    # The file read cleanly above, so reading it again cannot fail differently.
    text = Path(args.file).read_text(encoding="utf-8", errors="replace")
    _refuse_authored_units(args.file, text)
    for diagnostic in diagnostics:
        print(diagnostic.format(), file=sys.stderr)
    skipped = question_lines(text)
    note = f"# skipped: {skipped} question lines\n" if skipped else ""
    sys.stdout.write(f"# Units from {args.file}\n{note}\n{to_markdown(units)}")
    return 1 if any(d.is_error for d in diagnostics) else 0


def _refuse_authored_units(file: str, text: str) -> None:
    """A Markdown unit, SOP or JSON Lines file read as plain text gives units made of its field
    lines and permission errors about "plain text, which has no fields": its units need no ingest."""
    written = SUFFIX_FORMATS.get(Path(file).suffix.lower())
    if written is not None and written is not Format.TEXT and detect_format(text, file) is written:
        raise UsageError(
            f"{file} holds units in the {written} format already; ingest turns plain text into units "
            f"(mrptui check {file} lists its units)"
        )
