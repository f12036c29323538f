"""Readers for the three KB formats (Markdown, SOP, plain text), their validator and writers."""

from core.cnl.markdown import read_markdown, to_markdown
from core.cnl.plaintext import fact_triple, read_plaintext, split_sentences
from core.cnl.question_block import question_lines
from core.cnl.sop import format_intents, parse_intents, read_sop
from core.cnl.source import (
    FOLDER_SUFFIXES,
    SUFFIX_FORMATS,
    Format,
    ReadResult,
    detect_format,
    normalise_newlines,
    read_file,
    read_text,
)

__all__ = [
    "FOLDER_SUFFIXES",
    "SUFFIX_FORMATS",
    "Format",
    "ReadResult",
    "detect_format",
    "fact_triple",
    "format_intents",
    "normalise_newlines",
    "parse_intents",
    "question_lines",
    "read_file",
    "read_markdown",
    "read_plaintext",
    "read_sop",
    "read_text",
    "split_sentences",
    "to_markdown",
]
