"""Choosing a reader for a text, and reading files safely (size cap, binary and encoding checks)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path, PurePath
from typing import NamedTuple

from core.cnl.jsonl import read_jsonl
from core.cnl.markdown import read_markdown
from core.cnl.plaintext import read_plaintext
from core.cnl.sop import read_sop
from core.diagnostics import Code, Diagnostic
from core.units import KnowledgeUnit

# Files above this are refused before reading: no KB file is legitimately this large, and
# reading one would stall the app.
MAX_FILE_BYTES = 20 * 1024 * 1024
_BINARY_PROBE_BYTES = 8192


class Format(StrEnum):
    MARKDOWN = "markdown"
    SOP = "sop"
    TEXT = "text"
    JSONL = "jsonl"


SUFFIX_FORMATS = {".md": Format.MARKDOWN, ".cnl": Format.SOP, ".txt": Format.TEXT, ".nl": Format.TEXT, ".jsonl": Format.JSONL}
_READERS = {Format.MARKDOWN: read_markdown, Format.SOP: read_sop, Format.TEXT: read_plaintext, Format.JSONL: read_jsonl}


class ReadResult(NamedTuple):
    units: list[KnowledgeUnit]
    diagnostics: list[Diagnostic]


def detect_format(text: str, file: str) -> Format:
    """`.jsonl` is JSON Lines; `.cnl` or text starting with `@` is SOP; then `.md` is Markdown;
    anything else plain text."""
    suffix = PurePath(file).suffix.lower()
    if suffix == ".jsonl":
        return Format.JSONL
    if suffix == ".cnl" or text.lstrip().startswith("@"):
        return Format.SOP
    if suffix == ".md":
        return Format.MARKDOWN
    return Format.TEXT


def read_text(text: str, file: str, kind: Format | str | None = None) -> ReadResult:
    """Units and diagnostics of `text`, read as `kind` or as `detect_format` decides."""
    reader = _READERS[Format(kind) if kind else detect_format(text, file)]
    return ReadResult(*reader(text, file))


def read_file(path: Path, kind: Format | str | None = None) -> ReadResult:
    """Read a KB file; every I/O problem becomes a diagnostic, never an exception.

    Without `kind`, the file's extension must be one of `SUFFIX_FORMATS`.
    """
    file = str(path)
    if kind is None and path.suffix.lower() not in SUFFIX_FORMATS:
        expected = ", ".join(SUFFIX_FORMATS)
        return _failed(Code.UNSUPPORTED_FILE_TYPE, f"unsupported file type {path.suffix or '(none)'!r}; expected {expected}", file)
    text = _load(path)
    if isinstance(text, Diagnostic):
        return ReadResult([], [text])
    return read_text(text, file, kind)


def _failed(code: Code, message: str, file: str) -> ReadResult:
    return ReadResult([], [Diagnostic(code=code, message=message, file=file)])


def _load(path: Path) -> str | Diagnostic:
    file = str(path)
    try:
        size = path.stat().st_size
        if path.is_dir():
            return Diagnostic(code=Code.FILE_UNREADABLE, message="is a directory, not a file", file=file)
        if size > MAX_FILE_BYTES:
            return _too_large(size, file)
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return Diagnostic(code=Code.PATH_NOT_FOUND, message="no such file", file=file)
    except OSError as exc:
        return Diagnostic(code=Code.FILE_UNREADABLE, message=exc.strerror or str(exc), file=file)
    # The file may have grown between stat and read.
    if len(data) > MAX_FILE_BYTES:
        return _too_large(len(data), file)
    if b"\0" in data[:_BINARY_PROBE_BYTES]:
        return Diagnostic(code=Code.BINARY_FILE, message="contains NUL bytes; not a text file", file=file)
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        return _encoding_error(data, exc.start, file)


def _too_large(size: int, file: str) -> Diagnostic:
    return Diagnostic(
        code=Code.FILE_TOO_LARGE, message=f"{size} bytes is over the {MAX_FILE_BYTES}-byte limit", file=file
    )


def _encoding_error(data: bytes, offset: int, file: str) -> Diagnostic:
    line_start = data.rfind(b"\n", 0, offset) + 1
    line = data.count(b"\n", 0, offset) + 1
    col = len(data[line_start:offset].decode("utf-8", errors="replace")) + 1
    return Diagnostic(
        code=Code.INVALID_ENCODING,
        message=f"byte 0x{data[offset]:02x} is not valid UTF-8",
        file=file,
        line=line,
        col=col,
    )
