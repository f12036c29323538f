"""Readers for the three KB formats (Markdown, SOP, plain text), their validator and writers.

The names below are imported on first use (PEP 562): `core.units` imports `core.cnl.caps`, which
runs this file, and a warm `mrptui ask` (its KB read from the index cache) needs none of the
readers; importing them all here cost ~20% of its imports (`python -X importtime`, issue 41).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.cnl.formats import FOLDER_SUFFIXES, SUFFIX_FORMATS, Format
    from core.cnl.intent_cnl import format_intents, parse_intents
    from core.cnl.markdown import read_markdown, to_markdown
    from core.cnl.plain_sentences import split_sentences
    from core.cnl.plaintext import fact_triple, read_plaintext
    from core.cnl.question_block import question_lines
    from core.cnl.sop import read_sop
    from core.cnl.source import ReadResult, detect_format, normalise_newlines, read_file, read_text

_HOMES = {
    "core.cnl.formats": ("FOLDER_SUFFIXES", "SUFFIX_FORMATS", "Format"),
    "core.cnl.markdown": ("read_markdown", "to_markdown"),
    "core.cnl.plaintext": ("fact_triple", "read_plaintext"),
    "core.cnl.plain_sentences": ("split_sentences",),
    "core.cnl.question_block": ("question_lines",),
    "core.cnl.intent_cnl": ("format_intents", "parse_intents"),
    "core.cnl.sop": ("read_sop",),
    "core.cnl.source": ("ReadResult", "detect_format", "normalise_newlines", "read_file", "read_text"),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

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


def __getattr__(name: str) -> object:
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'core.cnl' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value
