"""The persistent index store: one segment per KB source file, reused while the file is unchanged.

A segment holds what reading and tokenising one file produced (units, diagnostics, token ids,
field lengths, stems). `SegmentStore` finds or builds segments under the cache directory;
`TokenTable` joins the segments of a KB into one vocabulary so BM25 builds a view's index from
stored token ids instead of re-tokenising every unit.
"""

from core.store.location import cache_root
from core.store.segment import Segment
from core.store.store import SegmentStore, default_store, store_at
from core.store.tokens import TokenTable

__all__ = ["Segment", "SegmentStore", "TokenTable", "cache_root", "default_store", "store_at"]
