"""Linguistic tools with shipped data: a UPOS tagger, noun-phrase chunks and an OEWN lexicon.

Every model loads lazily, once per process, on first use (core.nlp.lazy). Data and licences:
docs/nlp.md and NOTICE.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.nlp.lexicon import Lexicon


def preload(cache: Path | None) -> threading.Thread:
    """Import the tagger and load its weights and the lexicon in a daemon thread, for a caller that
    will tag soon (`mrptui ask`) and has other work first: reading and decompressing them runs
    without the GIL, beside that work. `tag` waits for a load under way (core.nlp.lazy). Anything
    that fails here (a module or data file that cannot be read) fails again, with its error,
    where it is used. `cache`: the folder the command's session will cache into (None: none),
    which the unpacked data is read from and stored in (core/nlp/unpacked.py)."""
    from core.nlp.unpacked import use_cache_of

    use_cache_of(cache)

    def load() -> None:
        try:
            from core.nlp.tagger import load_models

            load_models()
        except Exception:  # noqa: BLE001 - reported by the first real use, in its own context
            pass

    thread = threading.Thread(target=load, name="nlp-preload", daemon=True)
    thread.start()
    return thread


@lru_cache(maxsize=1)
def lexicon_or_none() -> Lexicon | None:
    """The WordNet-derived lexicon (issue 24 part 4), or None where it is not installed. Here, not
    beside the support check, so question analysis reads it without importing the answer code."""
    try:
        from core.nlp.lexicon import lexicon
    except ImportError:
        return None
    return lexicon()
