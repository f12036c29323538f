"""The cache folder's table of stems of words outside every KB (question words, cue words), kept
across processes so a repeated question does not import nltk either: read when the process's
store opens, merged with what the process stemmed at exit.
"""

from __future__ import annotations

import json
from pathlib import Path

from core.store.atomic import replace_file
from core.store.contents import STEMS_FILE
from core.store.shaping import code_digest
from core.text.tokenizer import computed_stems

MAX_STORED_STEMS = 200_000
# The table records which tokenizer source computed it; a stem table from other code is ignored.
_STEMMER_KEY = "\0stemmer"


def read_stems(root: Path) -> dict[str, str]:
    try:
        table = json.loads((root / STEMS_FILE).read_bytes())
    except (OSError, ValueError):
        return {}
    valid = isinstance(table, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in table.items())
    return table if valid and table.get(_STEMMER_KEY) == _stemmer_id(root) else {}


def save_stems(root: Path) -> None:
    """Merge this process's new stems into the cache's table; best effort, bounded."""
    new = computed_stems()
    if not new or not root.is_dir():
        return
    table = {**read_stems(root), **new, _STEMMER_KEY: _stemmer_id(root)}
    if len(table) > MAX_STORED_STEMS:
        return
    try:
        replace_file(root / STEMS_FILE, json.dumps(table).encode())
    except OSError:
        pass


def _stemmer_id(root: Path) -> str:
    return code_digest(root)[:16]
