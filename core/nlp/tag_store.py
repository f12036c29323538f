"""KB sentences' part-of-speech tags kept in the index store, so a later question reads them.

Issue 24 asks to tag KB sentences when a segment is built. Tagging is ~9 µs a word: 100k units
(about 200k sentences) would add ~25 CPU s to a cold open whose budget is a few seconds, so the
build does not tag (docs/nlp.md, "Tags in the index store"). Instead:

1. At question time `core.nlp.tagging.tag_text` tags only the sentences the answer reads (a few dozen)
   and remembers them here (`remember`); a sentence found here is not tagged again.
2. After the indexes are ready the explorer runs `warm` in a worker: it reads the stored tags and
   tags the view's other sentences in short slices, resting between slices so it never takes
   more than a fraction of a core (the GIL is shared with the explorer's own thread), and
   waits while a question runs; then it writes the table back.

One file per tagger: `<cache>/tags/<model digest>.bin`, where the model digest covers the tagger's
weights and closed-class words, the lexicon its revisions read, and the code that tags; a changed tagger starts a new
file (the old one is removed by the next `save`). Rows are keyed by an 8-byte BLAKE2b digest of
the sentence's text, so a sentence shared by two files is stored once and no unit id is needed.
Like every store file, it is 0600 in 0700 folders and its keyed digest (the cache's `mac.key`,
core/store/private.py) is checked on load: a file that fails the check is ignored and rewritten.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from core.nlp.tagger import UPOS
from core.store.contents import TAGS as FOLDER
from core.store.contents import cache_refusal
from core.store.private import Mac, private_dirs, write_private

FORMAT = "mrptui-tags/1"
TAGS = tuple(sorted(UPOS))
_TAG_ID = {tag: i for i, tag in enumerate(TAGS)}
# Sentences kept at most (~30 bytes each: a 100k-unit KB holds about 200k).
MAX_SENTENCES = 2_000_000
# A sentence of more words is not stored (tagged again when read: it is rare and costs little).
MAX_WORDS = 255
# The background pass works in slices of this many seconds, each followed by a rest of WARM_REST
# times the slice (3: at most a quarter of one core). A slice is timed, not counted in sentences:
# with most sentences stored already, a count of tagged ones let it read and hash a 100k view's
# sentences for seconds without a rest. While the caller is busy it looks again every WARM_WAIT s.
WARM_SLICE = 0.01
WARM_REST = 3.0
WARM_WAIT = 0.1
_LOCK = threading.Lock()
_MEMO: dict[int, bytes] = {}
_LOADED: set[Path] = set()
_PENDING = 0


def _key(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


@lru_cache(maxsize=1)
def model_digest() -> str:
    """What the tags depend on: the weights, the lexicon and the tagging code (16 hex digits)."""
    from core.nlp import lexicon, perceptron, tagger, weights_table

    digest = hashlib.blake2b(digest_size=8)
    code = (tagger.__file__, perceptron.__file__, weights_table.__file__, __file__)
    for path in (tagger.DATA, tagger.CLOSED, lexicon.DATA, *map(Path, code)):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def recall(text: str) -> list[str] | None:
    """The stored tags of the sentence's words, or None when it was never tagged."""
    row = _MEMO.get(_key(text))
    return None if row is None else [TAGS[i] for i in row]


def remember(text: str, tags: Sequence[str]) -> None:
    """Keep a sentence's tags (from any thread), for the next read and the next `save`."""
    global _PENDING
    if len(tags) > MAX_WORDS or len(_MEMO) >= MAX_SENTENCES or any(t not in _TAG_ID for t in tags):
        return
    key = _key(text)
    if key not in _MEMO:
        _MEMO[key] = bytes(_TAG_ID[t] for t in tags)
        _PENDING += 1


def path_for(root: Path) -> Path:
    return Path(root) / FOLDER / f"{model_digest()}.bin"


def load(root: Path | None) -> int:
    """Read the cache's stored tags into memory once; the rows read (0 when none or refused)."""
    if root is None or cache_refusal(Path(root)) is not None:
        return 0
    path = path_for(root)
    with _LOCK:
        if path in _LOADED:
            return 0
        _LOADED.add(path)
    try:
        raw = path.read_bytes()
    except OSError:
        return 0
    rows = _decode(raw, Mac.of_root(Path(root)))
    for key, row in rows.items():
        _MEMO.setdefault(key, row)
    return len(rows)


def _decode(raw: bytes, mac: Mac) -> dict[int, bytes]:
    """The rows of a tags file, or nothing when it is not one this store wrote for this model."""
    newline = raw.find(b"\n")
    try:
        header = json.loads(raw[:newline])
        body = memoryview(raw)[newline + 1 :]
        count = int(header["count"])
        if (
            header.get("format") != FORMAT
            or header.get("model") != model_digest()
            or mac.of_bytes(body) != header["mac"]
        ):
            return {}
        keys = np.frombuffer(body, dtype="<u8", count=count)
        ends = np.frombuffer(body, dtype="<u4", count=count, offset=8 * count)
        tags = bytes(body[12 * count :])
    except (ValueError, KeyError, TypeError):
        return {}
    starts = np.concatenate(([0], ends[:-1])) if count else ends
    return {int(k): tags[int(s) : int(e)] for k, s, e in zip(keys, starts, ends)}


def save(root: Path | None) -> bool:
    """Write the table (0600, with its keyed digest) when it holds rows not yet written; stale
    tables of other taggers are removed. False when there is no usable cache."""
    global _PENDING
    if root is None or cache_refusal(Path(root)) is not None or not _PENDING:
        return False
    path = path_for(root)
    private_dirs(path.parent, Path(root))
    with _LOCK:
        rows = sorted(_MEMO.items())
        _PENDING = 0
    keys = np.fromiter((k for k, _ in rows), dtype="<u8", count=len(rows))
    ends = np.cumsum([len(row) for _, row in rows], dtype="<u8").astype("<u4")
    body = keys.tobytes() + ends.tobytes() + b"".join(row for _, row in rows)
    header = {
        "format": FORMAT,
        "model": model_digest(),
        "count": len(rows),
        "mac": Mac.of_root(Path(root)).of_bytes(body),
    }
    temp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        write_private(temp, [json.dumps(header, sort_keys=True).encode() + b"\n", body])
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)
    for other in path.parent.glob("*.bin"):
        if other != path:
            other.unlink(missing_ok=True)
    return True


def warm(
    root: Path | None,
    sentences: Iterable[str],
    tag: Callable[[str], object],
    *,
    limit: int = MAX_SENTENCES,
    rest: Callable[[float], None] = time.sleep,
    cancelled: Callable[[], bool] = lambda: False,
    busy: Callable[[], bool] = lambda: False,
    pause: Callable[[], object] = lambda: None,
) -> int:
    """The background pass: load the stored tags, tag (with `tag`, which remembers) the sentences
    not stored yet, at most `limit`, resting WARM_REST × each slice's time after each slice, and
    not going on while `busy()` (the explorer runs a question: it shares the interpreter's lock
    with the UI and the engine); then save. `pause` is called before each sentence is tagged: the
    explorer's pause point, where the pass waits while a key waits for its frame. Returns how many
    sentences it tagged."""
    load(root)
    tagged, started = 0, time.perf_counter()
    for text in sentences:
        if tagged >= limit or cancelled():
            break
        if _key(text) not in _MEMO:
            pause()
            tag(text)
            tagged += 1
        spent = time.perf_counter() - started
        if spent >= WARM_SLICE:
            rest(WARM_REST * spent)
            while busy() and not cancelled():
                rest(WARM_WAIT)
            started = time.perf_counter()
    save(root)
    return tagged


def clear_memory() -> None:
    """Forget every remembered sentence (tests; a process never needs to)."""
    global _PENDING
    with _LOCK:
        _MEMO.clear()
        _LOADED.clear()
        _PENDING = 0
