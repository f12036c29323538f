"""The persistent index store: one segment per KB source file, reused while the file is unchanged.

A segment holds what reading and tokenising one file produced (units, diagnostics, token ids,
field lengths, stems). `SegmentStore` finds or builds segments under the cache directory;
`TokenTable` joins the segments of a KB into one vocabulary so BM25 builds a view's index from
stored token ids instead of re-tokenising every unit.
"""

from __future__ import annotations

import importlib

# Resolved on first use: a caller of one small module (core.store.private, .location, .contents:
# the NLP data cache, the tag store) should not import the whole store (~0.1 CPU s).
_EXPORTS = {
    "Segment": "core.store.segment",
    "SegmentStore": "core.store.store",
    "TokenTable": "core.store.tokens",
    "cache_root": "core.store.location",
    "default_store": "core.store.store",
    "store_at": "core.store.store",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
