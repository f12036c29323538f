"""The KB file formats and the file suffixes that name them: apart from the readers, so that what
only lists or scans KB files (core/kb/) does not import every reader."""

from __future__ import annotations

from enum import StrEnum


class Format(StrEnum):
    MARKDOWN = "markdown"
    SOP = "sop"
    TEXT = "text"
    JSONL = "jsonl"


SUFFIX_FORMATS = {
    ".md": Format.MARKDOWN,
    ".cnl": Format.SOP,
    ".txt": Format.TEXT,
    ".nl": Format.TEXT,
    ".jsonl": Format.JSONL,
}
# Folder scans read these; `.jsonl` only when named explicitly (`--kb corpus.jsonl`), since traces
# are JSON Lines too and are often saved next to the KB they came from.
FOLDER_SUFFIXES = frozenset(SUFFIX_FORMATS) - {".jsonl"}
