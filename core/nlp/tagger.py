"""Universal part-of-speech tags (UPOS: NOUN, PROPN, VERB, AUX, NUM, ADJ, ADP, DET, PRON, …).

nltk's averaged perceptron with weights trained on UD English EWT by scripts/train_tagger.py
(93.85% test accuracy; docs/nlp.md), applied by core.nlp.perceptron (nltk's decisions without
importing nltk). The weights ship as gzipped JSON in core/nlp/data and load once, on first use,
from any thread. Words are split the way the treebank splits them, so the
tagger sees what it was trained on: clitics apart ("do" "n't", "John" "'s"), hyphens apart, every
punctuation mark its own token, numbers ("3.5", "1,200", "10:30") and abbreviations ("U.S.",
"Dr.", "Y.") whole.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Sequence
from pathlib import Path

from core.nlp.lazy import Lazy
from core.nlp.perceptron import Perceptron

DATA = Path(__file__).resolve().parent / "data" / "upos-ewt.json.gz"
FORMAT = "mrptui-upos-perceptron/1"
UPOS = frozenset(
    "ADJ ADP ADV AUX CCONJ DET INTJ NOUN NUM PART PRON PROPN PUNCT SCONJ SYM VERB X".split()
)

# Titles the treebank writes with their period; a closed list of English, not of any document.
_TITLES = r"(?:Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|Mt|Ft|Lt|Gen|Col|Rev|Inc|Ltd|Co|Corp|vs|etc|No|approx)\."
_WORD = re.compile(
    r"""
      (?i:n't)(?![^\W_])                        # the negative clitic: do|n't, ca|n't
    | ['’](?i:s|re|ve|ll|d|m)(?![^\W_])         # 's 're 've 'll 'd 'm
    | \d+(?i:st|nd|rd|th)(?![^\W_])              # 3rd
    | \d+(?:[.,:/]\d+)*(?!\d)                    # 3.5  1,200  10:30  12/05/2024
    | (?:[^\W\d_]\.){2,}                        # U.S.  e.g.
    | """ + _TITLES + r"""(?=\s|$)
    | [A-Z]\.(?=\s+[A-Za-z])                    # an initial: Y. pestis, J. Smith
    | [^\W_]+?(?=(?i:n't)(?![^\W_]))            # the host of n't: "do" of don't
    | [^\W_]+(?:['’](?!(?i:s|re|ve|ll|d|m)(?![^\W_]))[^\W\d_]+)*   # O'Brien, rock'n'roll
    | \.{2,}|-{2,}                              # ... and --
    | \S                                        # any other mark, one at a time
    """,
    re.VERBOSE,
)


def split_words(text: str) -> list[str]:
    """The treebank's word split of `text`; punctuation marks are words of their own."""
    return _WORD.findall(text)


def read_weights(path: Path = DATA) -> dict:
    """The document scripts/train_tagger.py wrote: format, classes, tagdict, weights."""
    with gzip.open(path, "rt", encoding="utf-8") as stream:
        document = json.load(stream)
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ValueError(f"{path}: not a {FORMAT} weights file")
    return document


def load(path: Path = DATA) -> Perceptron:
    """The tagger whose weights `path` holds."""
    document = read_weights(path)
    return Perceptron(document["weights"], document["tagdict"], document["classes"])


_TAGGER: Lazy[Perceptron] = Lazy(load)


def tag(words: Sequence[str]) -> list[str]:
    """One UPOS tag per word, for words already split (empty strings tag as X)."""
    if not words:
        return []
    cleaned = [w if w else "_" for w in words]
    tags = _TAGGER.get().tag(cleaned)
    return [t if w else "X" for w, t in zip(words, tags)]


def tag_text(text: str) -> list[tuple[str, str]]:
    """(word, UPOS) for every word of `text`, split by `split_words`."""
    words = split_words(text)
    return list(zip(words, tag(words)))
