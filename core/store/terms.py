"""Tokenising a file's units in one batch, for its segment.

`tokenize` per field text costs a cached lookup per token plus Python work per text, and the
stem table then split every text again. Here each text is lowercased, split and numbered in C,
every distinct token is analysed once (`normalise_word`, `words_of`), and the term ids of all
tokens are gathered with numpy from the distinct tokens' ids. Results equal `tokenize` text by text:
same tokens, and vocabulary ids in order of first use (tests: `tests/unit/store/test_store_terms.py`).
"""

from __future__ import annotations

from array import array
from collections import defaultdict
from collections.abc import Sequence
from itertools import chain, count, filterfalse
from typing import NamedTuple

import numpy as np

from core.text.tokenizer import normalise_word, words_of


class TermBatch(NamedTuple):
    counts: np.ndarray  # int32 [len(texts)]: tokens of each text
    terms: np.ndarray  # int32: every token's id in the vocabulary, text after text
    stems: dict[str, str]  # the stem of every word stemmed in the texts


def tokenise_texts(texts: Sequence[str], vocab: dict[str, int]) -> TermBatch:
    """Tokenise `texts` as `tokenize` does each; new terms join `vocab` (in place) in order of
    first use, as one `setdefault` per token in text order would add them.

    Every loop over tokens runs in C (map, dict, array); Python code runs once per text and once
    per distinct raw token at most (the cached `normalise_word` / `words_of` on a miss). Each
    text's raw tokens are dropped as soon as they are numbered: holding a file's raw tokens at
    once cost more in memory traffic than it saved in calls."""
    # Each distinct raw token's number, in order of first use: a hit is one C dict lookup, a miss
    # numbers the token (the count's next) without Python code.
    numbers: defaultdict[str, int] = defaultdict(count().__next__)
    number = numbers.__getitem__
    raw_ids_of = array("q")  # every raw token's number, in text order
    raw_counts = array("q")
    for text in texts:
        raws = text.lower().split()
        raw_counts.append(len(raws))
        raw_ids_of.extend(map(number, raws))
    raws = list(numbers)
    tokens_of = list(map(normalise_word, raws))
    per_raw = np.fromiter(map(len, tokens_of), dtype=np.int64, count=len(raws))
    raw_tokens = list(chain.from_iterable(tokens_of))
    # Distinct raw tokens in first-use order yield their terms in first-use order too.
    new = list(filterfalse(vocab.__contains__, dict.fromkeys(raw_tokens)))
    vocab.update(zip(new, count(len(vocab))))
    raw_terms = np.fromiter(map(vocab.__getitem__, raw_tokens), dtype=np.int32, count=len(raw_tokens))
    # A word and its stem stand at the same place in `words_of(raw)` and `normalise_word(raw)`.
    stems = dict(zip(chain.from_iterable(map(words_of, raws)), raw_tokens))
    raw_ids = np.frombuffer(raw_ids_of, dtype=np.int64)
    per_token = per_raw[raw_ids]
    ends = np.cumsum(per_token)
    # Term k of the j-th raw token is raw_terms[first_term[raw_ids[j]] + k].
    first_term = np.cumsum(per_raw) - per_raw
    within = np.arange(int(ends[-1]) if len(ends) else 0) - np.repeat(ends - per_token, per_token)
    terms = raw_terms[np.repeat(first_term[raw_ids], per_token) + within]
    cumulative = np.concatenate(([0], ends))
    text_ends = np.cumsum(np.array(raw_counts, dtype=np.int64))
    counts = (cumulative[text_ends] - cumulative[text_ends - np.array(raw_counts, dtype=np.int64)]).astype(np.int32)
    return TermBatch(counts, terms, stems)
