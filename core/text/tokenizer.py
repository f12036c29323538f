"""The one tokenizer pipeline that units and queries share (seed 000, DESIGN §5)."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from functools import lru_cache
from itertools import chain
from operator import itemgetter
from typing import Protocol

from core.infra.cancel import current
from core.infra.submodule import import_submodule
from core.text.words import STOPWORDS

_EDGE = "".join(chr(c) for c in range(128) if not (chr(c).isalnum() or chr(c) in "_-"))
# `tokenize` polls the calling plugin's cancel token every this-many words of a text over this
# many characters (each slice takes ~5 ms).
_POLLED_CHARS = 1 << 16
_POLLED_WORDS = 1 << 14
# nltk Porter's mode: a stem table computed in another mode (or by another nltk) is not ours.
STEMMER_MODE = "ORIGINAL_ALGORITHM"


@lru_cache(maxsize=1)
def _stemmer():
    """Imported on first use, which the explorer's first paint should not pay. The original
    Porter algorithm reproduces the reference's stems (uses→us, x-ray→x-rai); NLTK's default
    mode adds later tweaks that change them."""
    # `import nltk` would run the package's __init__, which imports nearly all of nltk (and scipy
    # when installed): 1-2 s before a question's first unknown word is stemmed.
    porter = import_submodule("nltk.stem.porter")
    return porter.PorterStemmer(mode=getattr(porter.PorterStemmer, STEMMER_MODE))


def load_stemmer() -> None:
    """Import nltk's Porter stemmer now (~0.07 s), e.g. in a thread while a cold open builds: the
    first answer stems cue words that a new cache holds no stems of. A failure here fails again,
    with its error, where a stem is needed."""
    try:
        _stemmer()
    except Exception:  # noqa: BLE001 - reported by the first real use, in its own context
        pass


# Stems read from the index store: a question whose words are all known never imports nltk.
_KNOWN_STEMS: dict[str, str] = {}
# Stems nltk computed in this process, which the store keeps for the next one.
_COMPUTED_STEMS: dict[str, str] = {}


def computed_stems() -> dict[str, str]:
    return dict(_COMPUTED_STEMS)


class StemSource(Protocol):
    """A lazily read stem table (an index-store segment's)."""

    def lookup(self, word: str) -> str | None: ...

    def is_read(self) -> bool: ...

    def size(self) -> int:
        """Bytes to parse when it is first read."""
        ...


# Stem tables of index-store segments, consulted (and read) only for a word not known yet:
# opening a KB must not merge every segment's vocabulary into one dict.
_STEM_SOURCES: dict[str, StemSource] = {}
_SOURCES_LOCK = threading.Lock()
# Bytes of unread tables a process may read to find stems. A word no table holds (a question
# word outside the KB, a cue word) read every table: 20 at 100k units (~0.5 s of CPU and ~30 MB
# kept), 200 at 1M, where nltk's Porter costs ~50 ms to import and ~10 µs a word. Past the
# budget a word the read tables do not hold is stemmed by nltk: the same stem either way. A
# small KB's tables all fit, so its questions still never import nltk.
STEM_SOURCE_BUDGET = 1 << 20
_source_bytes_read = 0


def learn_stems(table: Mapping[str, str]) -> None:
    """Remember stems computed earlier (same stemmer, same mode); `stem` then skips nltk for them."""
    _KNOWN_STEMS.update(table)


def add_stem_source(name: str, source: StemSource) -> None:
    """A lazily read stem table: `stem` asks it before computing a stem, within the budget."""
    with _SOURCES_LOCK:
        _STEM_SOURCES[name] = source


def _from_sources(token: str) -> str | None:
    """`token`'s stem from the tables already read, else from unread ones while the process's
    budget of bytes to read lasts."""
    global _source_bytes_read
    if not _STEM_SOURCES:  # a build worker's case: ~50k words, each stemmed once
        return None
    with _SOURCES_LOCK:
        sources = list(_STEM_SOURCES.values())
    unread = []
    for source in sources:
        if not source.is_read():
            unread.append(source)
            continue
        found = source.lookup(token)
        if found is not None:
            return found
    for source in unread:
        with _SOURCES_LOCK:
            if not source.is_read():
                if _source_bytes_read + source.size() > STEM_SOURCE_BUDGET:
                    continue
                _source_bytes_read += source.size()
        found = source.lookup(token)
        if found is not None:
            return found
    return None


def stem_table(texts: Iterable[str]) -> dict[str, str]:
    """The stem of every word `tokenize` would stem in `texts`, for the index store to persist."""
    raws: set[str] = set()
    for text in texts:
        raws.update(text.lower().split())
    analyses = list(map(analysed, raws))
    return dict(
        zip(chain.from_iterable(map(itemgetter(0), analyses)), chain.from_iterable(map(itemgetter(1), analyses)))
    )


@lru_cache(maxsize=1 << 18)
def stem(token: str) -> str:
    known = _KNOWN_STEMS.get(token)
    if known is None:
        known = _from_sources(token)
        if known is not None:
            _KNOWN_STEMS[token] = known
        else:
            known = _COMPUTED_STEMS[token] = _stemmer().stem(token)
    return known


@lru_cache(maxsize=1 << 18)
def normalise_word(raw: str) -> tuple[str, ...]:
    """The tokens of one lowercased whitespace-separated token: what `tokenize` emits for it."""
    return tuple(map(stem, words_of(raw)))


# A batch tokeniser wants each distinct token's words and their stems (its stem table pairs
# them): one cached lookup a token gives both, where `words_of` and `normalise_word` took two.
@lru_cache(maxsize=1 << 18)
def analysed(raw: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """`words_of(raw)` and `normalise_word(raw)`: the words of one lowercased token that get
    stemmed, and their stems, place by place."""
    words = words_of(raw)
    return words, tuple(map(stem, words))


def words_of(raw: str) -> tuple[str, ...]:
    """The words of one lowercased whitespace-separated token that get stemmed, in order (none
    for a stopword): `normalise_word(raw)` holds their stems."""
    word = raw.strip(_EDGE)
    if word.endswith("'s"):
        word = word[:-2].strip(_EDGE)
    # Tokens with no letter or digit ("--", "...") carry no meaning and only add noise.
    if word in STOPWORDS or not (word.isalnum() or any(ch.isalnum() for ch in word)):
        return ()
    if "-" in word and not word[0].isdigit():
        parts = [p for p in word.split("-") if p and p not in STOPWORDS]
        words = [word, *parts] if parts != [word] else [word]
    else:
        words = [word]
    return tuple(words)


def tokenize(text: str) -> list[str]:
    """Lowercase, split, strip edge punctuation, drop possessives and stopwords, stem.

    A long text (a 4 MB unit takes ~0.4 s) is done in slices of words, and the plugin call it
    runs in (if any) is polled between them, so a cancelled plugin stops within a slice."""
    if len(text) <= _POLLED_CHARS:
        return list(chain.from_iterable(map(normalise_word, text.lower().split())))
    token = current()
    words = text.lower().split()
    tokens: list[str] = []
    for start in range(0, len(words), _POLLED_WORDS):
        token.raise_if_cancelled()
        tokens.extend(chain.from_iterable(map(normalise_word, words[start : start + _POLLED_WORDS])))
    return tokens
