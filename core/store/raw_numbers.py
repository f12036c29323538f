"""Numbering the raw tokens of a batch of texts (lowercased, split on whitespace), in C.

A segment build numbers ~210k raw tokens a file to find the ~29k distinct ones, which alone go
through the tokenizer's Python. `str.split` and a dict lookup per token made one string object
per token (~15% of a build worker's CPU, issue 41). For ASCII texts, the usual case, numpy finds
the tokens in the texts' bytes instead, keys each by its length and bytes (`_keys`), and groups
equal keys by sorting a hash of them: only the distinct tokens become strings. Every token's key
is then compared with the key of the first token of its group, so a hash collision is caught and
the batch is numbered the dict's way; both ways give the same numbers (tests:
`tests/unit/store/test_store_terms.py`).
"""

from __future__ import annotations

from array import array
from collections import defaultdict
from collections.abc import Sequence
from itertools import count
from typing import NamedTuple

import numpy as np

# What `str.split` splits ASCII text on: the space and two runs of control characters.
_SPACE, _RUNS = np.uint8(32), ((np.uint8(9), np.uint8(13)), (np.uint8(28), np.uint8(31)))
# A token of up to this many bytes is keyed by its bytes themselves (two 8-byte words); a longer
# one (rare: few words are longer) by its number among the batch's long tokens, found in Python.
_SHORT = 16
# The mask of a word's first n bytes, by n.
_MASKS = np.array([(1 << (8 * n)) - 1 for n in range(9)], dtype=np.uint64)
_MIX = tuple(np.uint64(odd) for odd in (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9))


class RawNumbers(NamedTuple):
    raws: list[str]  # the distinct raw tokens, in order of first use
    ids: np.ndarray  # int64: every raw token's number (its index in `raws`), text after text
    counts: np.ndarray  # int64 [len(texts)]: raw tokens of each text


def number_raw_tokens(texts: Sequence[str]) -> RawNumbers:
    """`text.lower().split()` of every text, numbered in order of first use."""
    joined = " ".join(texts)
    if joined.isascii():
        found = _by_hash(joined.lower(), texts)
        if found is not None:
            return found
    return _by_dict(texts)


def _by_dict(texts: Sequence[str]) -> RawNumbers:
    # A hit is one C dict lookup; a miss numbers the token (the count's next) without Python code.
    numbers: defaultdict[str, int] = defaultdict(count().__next__)
    number = numbers.__getitem__
    ids = array("q")
    counts = array("q")
    for text in texts:
        raws = text.lower().split()
        counts.append(len(raws))
        ids.extend(map(number, raws))
    return RawNumbers(list(numbers), np.frombuffer(ids, dtype=np.int64), np.frombuffer(counts, dtype=np.int64))


def _by_hash(lowered: str, texts: Sequence[str]) -> RawNumbers | None:
    """The numbering of `lowered` (the texts joined by spaces, ASCII, lowercased), or None when
    two different tokens' keys share a hash."""
    encoded = lowered.encode("ascii")
    data = np.frombuffer(encoded, dtype=np.uint8)
    starts, ends = _bounds(data)
    keys = _keys(encoded, lowered, starts, ends)
    ids, firsts = _grouped(_mixed(*keys))
    representatives = firsts[ids]
    if not all(np.array_equal(key, key[representatives]) for key in keys):
        return None
    raws = [lowered[start:end] for start, end in zip(starts[firsts].tolist(), ends[firsts].tolist())]
    text_ends = np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)) + 1) - 1
    counts = np.diff(np.searchsorted(starts, text_ends), prepend=0)
    return RawNumbers(raws, ids, counts)


def _bounds(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end offsets of every whitespace-separated token."""
    # Compared as bytes: a table lookup would widen every byte to an index first.
    space = data == _SPACE
    for first, last in _RUNS:
        space |= data - first <= last - first  # unsigned: below `first` wraps past the run
    token = np.zeros(len(data) + 2, dtype=bool)
    np.logical_not(space, out=token[1:-1])
    edges = np.flatnonzero(token[1:] != token[:-1])
    return edges[0::2], edges[1::2]


def _keys(encoded: bytes, lowered: str, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per token, a key that equals another's exactly when the tokens are equal: its length and
    its first and next eight bytes (zero past its end), or for a long token its length, its
    number among the long tokens and zero."""
    padded = encoded + bytes(_SHORT)
    # Every byte offset's next eight bytes as one little-endian word (unaligned reads).
    words = np.ndarray((len(padded) - 7,), dtype="<u8", buffer=padded, strides=(1,))
    lengths = ends - starts
    keys = [words[starts + 8 * word] & _MASKS[np.clip(lengths - 8 * word, 0, 8)] for word in range(_SHORT // 8)]
    long = np.flatnonzero(lengths > _SHORT)
    if len(long):
        numbers: defaultdict[str, int] = defaultdict(count().__next__)
        found = [numbers[lowered[start:end]] for start, end in zip(starts[long].tolist(), ends[long].tolist())]
        keys[0][long] = found
        keys[1][long] = 0
    return (lengths.astype(np.uint64), *keys)


def _mixed(lengths: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """One 64-bit hash of the three keys, its high bits mixed from all of them."""
    with np.errstate(over="ignore"):
        hashes = first * _MIX[0] ^ second * _MIX[1] ^ lengths * _MIX[2]
        hashes ^= hashes >> np.uint64(31)
        hashes *= _MIX[0]
    return hashes


def _grouped(hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each token's group number, groups numbered in order of first use, and each group's first
    token. One sort of (hash, position) packed in a word: the low bits hold the position."""
    tokens = len(hashes)
    if not tokens:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    position_bits = np.uint64(max(tokens - 1, 1).bit_length())
    keys = (hashes << position_bits) | np.arange(tokens, dtype=np.uint64)
    keys.sort()
    positions = (keys & np.uint64((1 << int(position_bits)) - 1)).astype(np.int64)
    keys >>= position_bits
    starts_group = np.empty(tokens, dtype=bool)
    starts_group[0] = True
    np.not_equal(keys[1:], keys[:-1], out=starts_group[1:])
    group = np.cumsum(starts_group) - 1
    firsts = positions[starts_group]  # positions ascend within a group
    order = np.argsort(firsts, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    ids = np.empty(tokens, dtype=np.int64)
    ids[positions] = rank[group]
    return ids, firsts[order]
