"""Tokenising a file's units in one batch, for its segment.

`tokenize` per field text costs a cached lookup per token plus Python work per text, and the
stem table then split every text again. Here the texts' raw tokens are found and numbered in C
(core/store/raw_numbers.py), every distinct token is analysed once (`analysed`), and the term ids of all
tokens are gathered with numpy from the distinct tokens' ids. Results equal `tokenize` text by text:
same tokens, and vocabulary ids in order of first use (tests: `tests/unit/store/test_store_terms.py`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from itertools import chain, count
from operator import itemgetter
from typing import NamedTuple

import numpy as np

from core.store.raw_numbers import number_raw_tokens
from core.text.tokenizer import analysed


class TermBatch(NamedTuple):
    counts: np.ndarray  # int32 [len(texts)]: tokens of each text
    terms: np.ndarray  # int32: every token's id in the vocabulary, text after text
    stems: dict[str, str]  # the stem of every word stemmed in the texts


def tokenise_texts(texts: Sequence[str], vocab: dict[str, int]) -> TermBatch:
    """Tokenise `texts` as `tokenize` does each; new terms join `vocab` (in place) in order of
    first use, as one `setdefault` per token in text order would add them.

    Every loop over tokens runs in C (numpy, map, dict); Python code runs once per distinct raw
    token at most (the cached `analysed` on a miss)."""
    raws, raw_ids, raw_counts = number_raw_tokens(texts)
    analyses = list(map(analysed, raws))
    tokens_of = list(map(itemgetter(1), analyses))
    per_raw = np.fromiter(map(len, tokens_of), dtype=np.int64, count=len(raws))
    raw_tokens = list(chain.from_iterable(tokens_of))
    # Distinct raw tokens in first-use order yield their terms in first-use order too: a term
    # met for the first time takes the next number as it is looked up.
    numbers = defaultdict(count(len(vocab)).__next__, vocab)
    raw_terms = np.fromiter(map(numbers.__getitem__, raw_tokens), dtype=np.int32, count=len(raw_tokens))
    vocab.update(numbers)
    # A word and its stem stand at the same place in the two halves of `analysed(raw)`.
    stems = dict(zip(chain.from_iterable(map(itemgetter(0), analyses)), raw_tokens))
    per_token = per_raw[raw_ids]
    ends = np.cumsum(per_token)
    # Term k of the j-th raw token is raw_terms[first_term[raw_ids[j]] + k].
    first_term = np.cumsum(per_raw) - per_raw
    within = np.arange(int(ends[-1]) if len(ends) else 0) - np.repeat(ends - per_token, per_token)
    terms = raw_terms[np.repeat(first_term[raw_ids], per_token) + within]
    cumulative = np.concatenate(([0], ends))
    text_ends = np.cumsum(raw_counts)
    counts = (cumulative[text_ends] - cumulative[text_ends - raw_counts]).astype(np.int32)
    return TermBatch(counts, terms, stems)
