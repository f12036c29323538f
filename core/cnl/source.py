"""Choosing a reader for a text, and reading files safely (size cap, binary and encoding checks)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path, PurePath
from typing import NamedTuple

from core.cnl.caps import CAPS
from core.cnl.formats import SUFFIX_FORMATS, Format
from core.cnl.json_keys import raw_permission_key
from core.cnl.markdown import read_markdown
from core.cnl.permission_inline import permission_inline
from core.cnl.permissions import permission_line
from core.cnl.plaintext import read_plaintext
from core.cnl.sop import read_sop
from core.cnl.source_text import source_lines
from core.infra.collector import collector_paused
from core.infra.diagnostics import Code, Diagnostic, Severity, for_author
from core.infra.json_limits import other_encoding
from core.infra.safe_io import FileTooLarge, UnsafePath, read_regular
from core.units import KnowledgeUnit, is_public

# Files above this are refused before reading (FILE_TOO_LARGE). 4 MB is a long book in plain
# text or ~40,000 Markdown units. The worst case, dense one-line facts, reads at about 1 s of CPU
# per MB (4 MB: 222,000 units; `python -m benchmarks --ops read_cap`, docs/decisions.md), so the
# 20 MB cap this replaces let one file stall a load for a minute. Memory: core/cnl/caps.py.
MAX_FILE_BYTES = CAPS.max_file_bytes
# JSON Lines documents are one unit per line with no sentence or fact parsing: NFCorpus (6.2 MB,
# 3,633 documents) reads in about half a second, so a public IR corpus of tens of MB is fine.
MAX_JSONL_BYTES = CAPS.max_jsonl_bytes
# A NUL among the first bytes means a binary file (or UTF-16): refused whole. A NUL later is one
# bad character, replaced and reported like an undecodable byte.
_BINARY_PROBE_BYTES = 8192
_MAX_BAD_LINES = 10
BAD_CHARACTER = re.compile("[\x00\ud800-\udfff]")
_NON_BLANK = re.compile(r"\S")


# A README-style Markdown document has neither a `## Context Unit` heading nor a `Role:`/`Topic:`/
# `Claim:` line; reading it as unit Markdown would yield nothing, silently. A file with either is
# meant as units, so a misspelt heading still gets the Markdown reader's errors.
_UNIT_MARKDOWN = re.compile(
    r"^[ \t]*#+[ \t]*context[ \t_-]*unit\b|^[ \t]*(?:role|topic|claim)[ \t]*:", re.IGNORECASE | re.MULTILINE
)
_READERS = {Format.MARKDOWN: read_markdown, Format.SOP: read_sop, Format.TEXT: read_plaintext}


class ReadResult(NamedTuple):
    units: list[KnowledgeUnit]
    diagnostics: list[Diagnostic]


def detect_format(text: str, file: str) -> Format:
    """`.jsonl` is JSON Lines; `.cnl` or text starting with `@` is SOP; then `.md` is Markdown
    units when it has a unit heading or a unit field line, else prose read as plain text;
    anything else plain text."""
    suffix = PurePath(file).suffix.lower()
    if suffix == ".jsonl":
        return Format.JSONL
    if suffix == ".cnl" or text.lstrip().startswith("@"):
        return Format.SOP
    if suffix == ".md" and (not text or _UNIT_MARKDOWN.search(text)):
        return Format.MARKDOWN
    return Format.TEXT


def read_text(text: str, file: str, kind: Format | str | None = None) -> ReadResult:
    """Units and diagnostics of `text`, read as `kind` or as `detect_format` decides.

    Line breaks are normalised first (see `normalise_newlines`), and characters no reader may
    keep (NUL, undecodable bytes, lone surrogates) become U+FFFD with an error at their line.
    """
    text, problems = _replace_bad_characters(normalise_newlines(text), file)
    with collector_paused():
        units, diagnostics = _reader(Format(kind) if kind else detect_format(text, file))(text, file)
    if problems and (any(d.author_only for d in diagnostics) or any(not is_public(u) for u in units)):
        # Which unit a bad byte sits in is not tracked: in a file with restricted units it may be one.
        problems = for_author(problems)
    listing = Listing(file)
    listed = listing.take(labelled_for_author([*problems, *diagnostics], text))
    return ReadResult(units, listed + listing.left_out())


class Listing:
    """The first `inputs.maxProblems` public and as many author-only diagnostics of one file, taken
    as they come (a JSON Lines file's a piece at a time); `left_out` then says how many of each
    were not listed. Counted apart, so that a restricted unit's problems never change what a
    public caller is shown. What is left out is counted, not kept."""

    def __init__(self, file: str):
        self.file = file
        self._listed = {False: 0, True: 0}
        self._left: dict[bool, tuple[int, Diagnostic, bool]] = {}  # count, first, any error

    def take(self, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
        kept = []
        for diagnostic in diagnostics:
            kind = diagnostic.author_only
            if self._listed[kind] < CAPS.max_problems:
                self._listed[kind] += 1
                kept.append(diagnostic)
            else:
                count, first, error = self._left.get(kind, (0, diagnostic, False))
                self._left[kind] = (count + 1, first, error or diagnostic.is_error)
        return kept

    def left_out(self) -> list[Diagnostic]:
        return [
            Diagnostic(
                code=Code.TOO_MANY_PROBLEMS,
                message=f"{count:,} more problem(s) in this file are not listed "
                f"(inputs.maxProblems is {CAPS.max_problems:,})",
                file=self.file,
                line=first.line,
                col=first.col,
                severity=Severity.ERROR if error else Severity.WARNING,
                author_only=kind,
            )
            for kind, (count, first, error) in sorted(self._left.items())
        ]


def labelled_for_author(diagnostics: list[Diagnostic], text: str, first_line: int = 1) -> list[Diagnostic]:
    """Every diagnostic whose line carries a permission label, read or not, is the author's: a
    caller's count of it would tell that a restricted unit is written there (a JSON line broken
    before its `"acl"` is read, a heading without an id above an `Acl:` line). `text` starts at
    line `first_line` of its file (a piece of it: `read_pieces`)."""
    if all(d.author_only for d in diagnostics):
        return diagnostics
    lines = source_lines(text)
    return [
        d
        if d.author_only or not 0 <= d.line - first_line < len(lines) or not carries_label(lines[d.line - first_line])
        else for_author([d])[0]
        for d in diagnostics
    ]


def carries_label(line: str) -> bool:
    return bool(permission_line(line) or permission_inline(line) or raw_permission_key(line))


def _reader(kind: Format):
    if kind is Format.JSONL:
        # Its pydantic record model takes milliseconds to build: only reading a .jsonl file needs it.
        from core.cnl.jsonl import read_jsonl

        return read_jsonl
    return _READERS[kind]


def normalise_newlines(text: str) -> str:
    """CRLF, a lone CR, U+2028 LINE SEPARATOR and U+2029 PARAGRAPH SEPARATOR each become one LF.

    Files written with old Mac (CR-only) endings or by word processors (U+2028/U+2029) would
    otherwise be one long line that yields no unit. Each separator counts as one line, as in
    editors that break there; a paragraph break in plain text still needs a blank line.
    """
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\u2028" in text or "\u2029" in text:
        text = text.replace("\u2028", "\n").replace("\u2029", "\n")
    return text


def read_file(path: Path, kind: Format | str | None = None) -> ReadResult:
    """Read a KB file; every I/O problem becomes a diagnostic, never an exception.

    Without `kind`, the file's extension must be one of `SUFFIX_FORMATS`. Only regular files are
    opened: a FIFO, socket or device is skipped with a diagnostic (opening a FIFO blocks forever).
    """
    file = str(path)
    if kind is None and path.suffix.lower() not in SUFFIX_FORMATS:
        expected = ", ".join(SUFFIX_FORMATS)
        return _failed(
            Code.UNSUPPORTED_FILE_TYPE, f"unsupported file type {path.suffix or '(none)'!r}; expected {expected}", file
        )
    text = load_text(path, read_cap(path, kind))
    if isinstance(text, Diagnostic):
        return ReadResult([], [text])
    return read_text(text, file, kind)


def read_pieces(path: Path) -> Iterator[ReadResult]:
    """`read_file` a piece at a time: a JSON Lines file `CAPS.piece_units` documents at a time
    (with their own line numbers), so that its units need not all be alive at once; any other
    file in one piece. Undecodable bytes are reported after the last piece, once it is known
    whether the file holds a restricted unit (see `read_text`)."""
    if detect_format("", str(path)) is not Format.JSONL:
        yield read_file(path)
        return
    text = load_text(path, read_cap(path))
    if isinstance(text, Diagnostic):
        yield ReadResult([], [text])
        return
    file = str(path)
    text, problems = _replace_bad_characters(normalise_newlines(text), file)
    from core.cnl.jsonl import read_jsonl, too_many_lines

    restricted = False
    listing = Listing(file)
    start, line = 0, 1
    while start < len(text):
        if line > CAPS.max_jsonl_lines:
            rest = _NON_BLANK.search(text, start)
            if rest is not None:
                yield ReadResult([], [too_many_lines(file, line + text.count("\n", start, rest.start()))])
            break
        end = start
        for _ in range(min(CAPS.piece_units, CAPS.max_jsonl_lines - line + 1)):
            end = text.find("\n", end) + 1
            if not end:
                end = len(text)
                break
        piece = text[start:end]
        with collector_paused():
            units, diagnostics = read_jsonl(piece, file, first_line=line)
        diagnostics = labelled_for_author(diagnostics, piece, line)
        restricted = restricted or any(d.author_only for d in diagnostics) or any(not is_public(u) for u in units)
        yield ReadResult(units, listing.take(diagnostics))
        line += text.count("\n", start, end)
        start = end
    if problems:
        yield ReadResult([], listing.take(for_author(problems) if restricted else labelled_for_author(problems, text)))
    if left_out := listing.left_out():
        yield ReadResult([], left_out)


def read_cap(path: Path, kind: Format | str | None = None) -> int:
    """The most bytes a KB file of this format (named, or by its extension) may hold."""
    jsonl = (Format(kind) if kind else detect_format("", str(path))) is Format.JSONL
    return MAX_JSONL_BYTES if jsonl else MAX_FILE_BYTES


def _failed(code: Code, message: str, file: str) -> ReadResult:
    return ReadResult([], [Diagnostic(code=code, message=message, file=file)])


def load_text(path: Path, cap: int) -> str | Diagnostic:
    data = load_bytes(path, cap)
    return data if isinstance(data, Diagnostic) else decode(data, str(path))


def load_bytes(path: Path, cap: int) -> bytes | Diagnostic:
    """A regular file's bytes, at most `cap` of them, or why they cannot be read."""
    file = str(path)
    try:
        return read_regular(path, cap)
    except FileTooLarge as exc:
        return Diagnostic(code=Code.FILE_TOO_LARGE, message=exc.reason, file=file)
    except UnsafePath as exc:
        return Diagnostic(code=Code.FILE_UNREADABLE, message=exc.reason, file=file)
    except FileNotFoundError:
        return Diagnostic(code=Code.PATH_NOT_FOUND, message="no such file", file=file)
    except OSError as exc:
        # A link loop (ELOOP), a permission problem, an I/O error.
        return Diagnostic(code=Code.FILE_UNREADABLE, message=exc.strerror or str(exc), file=file)


def decode(data: bytes, file: str) -> str | Diagnostic:
    """A KB file's bytes as text (before `read_text`), or why they are not text."""
    if (why := other_encoding(data)) is not None:
        return Diagnostic(code=Code.INVALID_ENCODING, message=why, file=file)
    if b"\0" in data[:_BINARY_PROBE_BYTES]:
        return Diagnostic(code=Code.BINARY_FILE, message="contains NUL bytes; not a text file", file=file)
    # Undecodable bytes become lone surrogates here, reported and replaced by `read_text`.
    return data.decode("utf-8", errors="surrogateescape").removeprefix("\ufeff")


def _replace_bad_characters(text: str, file: str) -> tuple[str, list[Diagnostic]]:
    """`text` with every NUL and lone surrogate replaced by U+FFFD, and an error at the first one
    of each line (up to `_MAX_BAD_LINES` lines, so a garbled file gives a screenful, not a flood)."""
    match = first_bad_character(text)
    if match is None:
        return text, []
    diagnostics: list[Diagnostic] = []
    line, counted_to = 1, 0
    while match is not None and len(diagnostics) < _MAX_BAD_LINES:
        at = match.start()
        line += text.count("\n", counted_to, at)
        line_start = text.rfind("\n", 0, at) + 1
        message = _bad_character(text[at])
        diagnostics.append(
            Diagnostic(code=Code.INVALID_ENCODING, message=message, file=file, line=line, col=at - line_start + 1)
        )
        line_end = text.find("\n", at)
        counted_to = at
        match = BAD_CHARACTER.search(text, line_end) if line_end >= 0 else None
    if match is not None and len(diagnostics) == _MAX_BAD_LINES:
        last = diagnostics[-1]
        diagnostics[-1] = last.model_copy(update={"message": f"{last.message} (and more on later lines)"})
    return BAD_CHARACTER.sub("\ufffd", text), diagnostics


def first_bad_character(text: str) -> re.Match[str] | None:
    """The first NUL or lone surrogate in `text`, if any. An ASCII text (a flag CPython keeps on
    the string) holds no surrogate and `in` finds a NUL at memchr speed, where the pattern's
    search costs ~55 instructions a character: 4% of a cold open's build of a 5,000-unit file."""
    if text.isascii() and "\0" not in text:
        return None
    return BAD_CHARACTER.search(text)


def _bad_character(char: str) -> str:
    if char == "\0":
        return "NUL byte in text; replaced with U+FFFD"
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:
        return f"byte 0x{code - 0xDC00:02x} is not valid UTF-8 (save the file as UTF-8); replaced with U+FFFD"
    return f"lone surrogate U+{code:04X} is not valid text; replaced with U+FFFD"
