"""Hypervector algebra (4096-bit, DESIGN §7): random vectors, bind, permute, bundle, n-gram encoding.

Vectors are 64 packed uint64 words; bit j lives in word j // 64 at bit j % 64.

- Random HV: the 512-byte SHAKE-256 digest of `seed NUL key`, so every process agrees without state.
  Keys are namespaced: "tok:<stem>", "chr:<n-gram>", "role:<Role>", "act:<act>".
- bind = XOR (self-inverse); ρ = rotation of the whole vector by one bit towards higher bits.
- bundle = per-bit majority. An even number of members gets one extra tie-breaking member,
  ρ(XOR of all members): it is fixed by the members alone (so bundles stay order-independent and
  deterministic) yet unrelated to each of them, so it does not pull different bundles together the
  way one shared constant tie vector would.
- Text is an n-gram bundle: one member per token (unigrams, position-free) plus
  bind(T(a), ρ(T(b))) for each adjacent pair a b (bigrams, which keep order), where T is the token
  vector. Unigrams deliberately carry no position: ρ^i-locked unigrams would only match when a
  question puts a word at the same index as the unit does, which questions almost never do; word
  order is kept by the bigrams. n tokens give 2n − 1 members, always odd, so text never needs the
  tie rule and the majority is simply "set in at least n members".
- Token vectors T: the token's own random HV, or (with `charNgrams` = n) the bundle of it and the
  HVs of the token's character n-grams (with `<` and `>` marking its ends), so tokens that share
  most of their letters ("cholesterol", "hypercholesterolemia") get similar vectors.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence
from functools import lru_cache, partial
from itertools import chain, repeat

import numpy as np

from core.infra.cancel import current, note_budget

DIMENSIONS = 4096
WORDS = DIMENSIONS // 64
# Rows (members × units) per encoding batch: 2 MB of planes, measured fastest (1 MB paid more
# per-call overhead than it saved in cache misses).
_BATCH_ROWS = 1 << 12
_ALL_ONES = np.uint64(0xFFFF_FFFF_FFFF_FFFF)


def hv_table(seed: str, keys: Sequence[str]) -> np.ndarray:
    """One random hypervector per key, shape [len(keys), 64]."""
    digests = b"".join(hashlib.shake_256(f"{seed}\x00{key}".encode()).digest(512) for key in keys)
    return np.frombuffer(digests, dtype="<u8").astype(np.uint64).reshape(len(keys), WORDS)


@lru_cache(maxsize=4096)
def hv(seed: str, key: str) -> np.ndarray:
    vector = hv_table(seed, [key])[0]
    vector.flags.writeable = False  # cached and shared between callers
    return vector


def bind(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.bitwise_xor(a, b)


def permute(vectors: np.ndarray) -> np.ndarray:
    """ρ: rotate each vector (last axis) by one bit; bit 4095 wraps to bit 0."""
    vectors = np.ascontiguousarray(vectors, dtype=np.uint64)
    out = vectors << np.uint64(1)
    # Each word takes the top bit of the word below it. Done on the flat array, every pass is
    # contiguous (strided row slices ran ~2× slower on big tables); word 0 of each row took
    # the previous row's top bit there, so it is set again from its own row's last word.
    carry = vectors >> np.uint64(63)
    out.reshape(-1)[1:] |= carry.reshape(-1)[:-1]
    out[..., 0] = (vectors[..., 0] << np.uint64(1)) | carry[..., -1]
    return out


def similarity(a: np.ndarray, b: np.ndarray) -> float:
    return 1.0 - int(np.bitwise_count(np.bitwise_xor(a, b)).sum()) / DIMENSIONS


def bundle(vectors: np.ndarray) -> np.ndarray:
    """Per-bit majority of the rows of `vectors`; see the module docstring for the tie rule."""
    members = np.asarray(vectors, dtype=np.uint64).reshape(-1, WORDS)
    if len(members) == 0:
        return np.zeros(WORDS, dtype=np.uint64)
    if len(members) % 2 == 0:
        members = np.vstack([members, permute(np.bitwise_xor.reduce(members, axis=0))])
    counts = np.unpackbits(members.view(np.uint8), axis=1).sum(axis=0)
    return np.packbits(counts * 2 > len(members)).view(np.uint64)


def char_ngrams(token: str, n: int) -> list[str]:
    marked = f"<{token}>"
    return [marked[i : i + n] for i in range(max(1, len(marked) - n + 1))]


class _VectorCache:
    """Vectors already built, by key, rows of one growing matrix: a batch costs one dict probe
    per key and one numpy gather, where a dict of per-key bytes cost a join per key. Emptied when
    it would outgrow `limit` rows, so a huge vocabulary cannot pin memory. Rows are only appended
    (growing copies the matrix), so a reader's snapshot stays valid while another thread adds."""

    def __init__(self, limit: int):
        self._limit = limit
        self._rows: dict[str, int] = {}
        self._matrix = np.empty((0, WORDS), dtype=np.uint64)
        self._lock = threading.Lock()

    def table(self, keys: Sequence[str], build: Callable[[list[str]], np.ndarray]) -> np.ndarray:
        """The vector of each key, shape [len(keys), 64]; `build` makes the missing ones."""
        with self._lock:
            matrix, known = self._matrix, self._rows
            rows = np.fromiter(map(known.get, keys, repeat(-1)), dtype=np.int64, count=len(keys))
        out = np.empty((len(keys), WORDS), dtype=np.uint64)
        found = rows >= 0
        out[found] = matrix[rows[found]]
        absent = np.flatnonzero(~found).tolist()
        if absent:
            missing = list(dict.fromkeys(keys[i] for i in absent))
            built = build(missing)
            where = {key: i for i, key in enumerate(missing)}
            out[absent] = built[[where[keys[i]] for i in absent]]
            self._add(missing, built)
        return out

    def _add(self, keys: list[str], vectors: np.ndarray) -> None:
        with self._lock:
            new = [i for i, key in enumerate(keys) if key not in self._rows]  # another thread's meanwhile
            if len(self._rows) + len(new) > self._limit:
                self._rows, self._matrix = {}, np.empty((0, WORDS), dtype=np.uint64)
                new = new[: self._limit]
            count = len(self._rows)
            if count + len(new) > len(self._matrix):
                rows = min(max(2 * len(self._matrix), 1024), self._limit)
                grown = np.empty((max(rows, count + len(new)), WORDS), dtype=np.uint64)
                grown[:count] = self._matrix[:count]
                self._matrix = grown
            self._matrix[count : count + len(new)] = vectors[new]
            self._rows.update(zip((keys[i] for i in new), range(count, count + len(new))))


_SORTED_RANKS = 4096


def _gram_keys(rows: np.ndarray) -> np.ndarray:
    """One sortable key per n-gram row of code points (0x110000 = none): an int64 in base
    (distinct code points + 1) when that fits, which sorts several times faster than raw bytes."""
    if rows.size <= _SORTED_RANKS:
        # A question's few n-grams: sorting them beats filling a lookup over every code point
        # (~0.15 s the first time a process does it).
        _, ranked = np.unique(rows, return_inverse=True)
        ranked = ranked.reshape(rows.shape).astype(np.int64)
    else:
        present = np.zeros(0x110001, dtype=bool)
        present[rows.ravel()] = True
        ranked = (np.cumsum(present, dtype=np.int64) - 1)[rows]  # dense ranks by lookup: no sort
    base, n = int(ranked.max(initial=0)) + 1, rows.shape[1]
    if base**n >= 1 << 62:  # many distinct characters: compare the raw bytes instead
        return np.ascontiguousarray(rows).view(np.dtype((np.void, 4 * n))).ravel()
    keys = ranked[:, 0]
    for column in range(1, n):
        keys = keys * base + ranked[:, column]
    return keys


# Per (kind, seed, n): char-n-gram token vectors (a question's words are looked up again and
# again; a file shares many words with the others) and char n-gram HVs (shared by nearly all
# files). 64 MB each at most.
_CACHES: dict[tuple[str, str, int], _VectorCache] = {}
_CACHES_LOCK = threading.Lock()
_CACHE_ROWS = 1 << 17


def _cache(kind: str, seed: str, n: int) -> _VectorCache:
    with _CACHES_LOCK:
        return _CACHES.setdefault((kind, seed, n), _VectorCache(_CACHE_ROWS))


def token_table(seed: str, tokens: Sequence[str], char_n: int = 0) -> np.ndarray:
    """The token vector T of each token, shape [len(tokens), 64] (see the module docstring)."""
    if not char_n:
        return hv_table(seed, [f"tok:{t}" for t in tokens])
    return _cache("tok", seed, char_n).table(tokens, partial(_char_token_table, seed, n=char_n))


def _char_token_table(seed: str, tokens: Sequence[str], n: int) -> np.ndarray:
    """`bundle` of each token's own HV and its char n-grams' HVs, for many tokens at once.

    The n-grams are cut and told apart in numpy (code points of every marked token, one row per
    n-gram), so only distinct n-grams become strings and are hashed, once per process while they
    fit in its cache. Tokens with the same member count are bundled together by the
    bit-sliced adder tree: the same majority (and tie member) as `bundle`, bit for bit.
    """
    if not tokens:
        return np.zeros((0, WORDS), dtype=np.uint64)
    grams, gram_of, gram_count = _ngram_ids(tokens, n)
    table = np.vstack([hv_table(seed, [f"tok:{t}" for t in tokens]), _gram_table(seed, grams, n)])
    out = np.empty((len(tokens), WORDS), dtype=np.uint64)
    first = np.cumsum(gram_count) - gram_count
    for count in np.unique(gram_count).tolist():
        rows = np.flatnonzero(gram_count == count)
        ids = np.empty((len(rows), count + 1), dtype=np.int64)
        ids[:, 0] = rows
        ids[:, 1:] = len(tokens) + gram_of[first[rows][:, None] + np.arange(count)]
        step = max(1, _BATCH_ROWS // (count + 3))
        for start in range(0, len(rows), step):
            out[rows[start : start + step]] = _majority(table[ids[start : start + step]])
    return out


def _ngram_ids(tokens: Sequence[str], n: int) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The distinct char n-grams of `tokens` (as `char_ngrams` cuts them), each token's n-grams as
    indexes into that list (token after token) and how many each token has."""
    marked = [f"<{t}>" for t in tokens]
    sizes = np.fromiter(map(len, marked), dtype=np.int64, count=len(marked))
    points = np.frombuffer("".join(marked).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    gram_count = np.maximum(1, sizes - n + 1)
    starts = np.repeat(np.cumsum(sizes) - sizes, gram_count)
    ends = np.repeat(np.cumsum(sizes), gram_count)
    at = starts + (np.arange(len(starts)) - np.repeat(np.cumsum(gram_count) - gram_count, gram_count))
    # A token shorter than n has one short n-gram: the rest of its row is an impossible code point.
    index = at[:, None] + np.arange(n)
    rows = np.where(index < ends[:, None], points[np.minimum(index, len(points) - 1)], np.uint32(0x110000))
    _, first, gram_of = np.unique(_gram_keys(rows), return_index=True, return_inverse=True)
    grams = ["".join(map(chr, row[row < 0x110000].tolist())) for row in rows[first]]
    return grams, gram_of.ravel(), gram_count


def _gram_table(seed: str, grams: Sequence[str], n: int) -> np.ndarray:
    return _cache("chr", seed, n).table(grams, lambda missing: hv_table(seed, [f"chr:{g}" for g in missing]))


def _majority(vectors: np.ndarray) -> np.ndarray:
    """`bundle` of each [members, 64] block of `vectors` ([batch, members, 64]), shape [batch, 64]."""
    batch, count = vectors.shape[:2]
    if count % 2 == 0:
        tie = permute(np.bitwise_xor.reduce(vectors, axis=1))
        vectors = np.concatenate([vectors, tie[:, None]], axis=1)
        count += 1
    need = (count + 1) // 2
    width = need.bit_length()
    bias = np.full(batch, (1 << width) - need, dtype=np.int64)
    planes = np.empty((count + 1, batch, WORDS), dtype=np.uint64)
    planes[0] = _bias_plane(bias, 0)
    planes[1:] = vectors.transpose(1, 0, 2)
    return _sum_digit(planes, bias, width)


# Token vectors for a list of distinct tokens, shape [len(tokens), 64]; None = plain random HVs.
TokenVectors = Callable[[Sequence[str]], np.ndarray]


def _table(seed: str, tokens: Sequence[str], vectors: TokenVectors | None) -> np.ndarray:
    return vectors(tokens) if vectors is not None else token_table(seed, tokens)


def encode_ngrams(tokens: Sequence[str], seed: str, vectors: TokenVectors | None = None) -> np.ndarray:
    """The n-gram bundle of one token sequence (zeros when there are no tokens)."""
    if not tokens:
        return np.zeros(WORDS, dtype=np.uint64)
    table = _table(seed, tokens, vectors)
    return bundle(np.vstack([table, table[:-1] ^ permute(table[1:])]))


def encode_ngrams_batch(
    sequences: Sequence[Sequence[str]], seed: str, vectors: TokenVectors | None = None, max_tokens: int | None = None
) -> np.ndarray:
    """`encode_ngrams` for many sequences at once, shape [len(sequences), 64]; identical results
    (for sequences within `max_tokens`, see `encode_id_batch`)."""
    lengths = cut_lengths(np.fromiter(map(len, sequences), dtype=np.int64, count=len(sequences)), max_tokens)
    flat = list(chain.from_iterable(sequence[:length] for sequence, length in zip(sequences, lengths.tolist())))
    vocab = {t: i for i, t in enumerate(dict.fromkeys(flat))}
    flat_ids = np.fromiter(map(vocab.__getitem__, flat), dtype=np.int32, count=len(flat))
    return encode_id_batch(flat_ids, lengths, _table(seed, list(vocab), vectors))


def encode_id_batch(
    flat_ids: np.ndarray, lengths: np.ndarray, table: np.ndarray, max_tokens: int | None = None
) -> np.ndarray:
    """The n-gram bundle of each of `len(lengths)` token sequences, shape [len(lengths), 64]:
    sequence i is the next `lengths[i]` entries of `flat_ids`, row indexes into `table` (the
    token vectors). A token's vector is looked up per occurrence, never computed again.

    A sequence longer than `max_tokens` is encoded from its first `max_tokens` tokens: the
    planes of one sequence take 1 KB a token (a 1.3M-token claim took 2.4 GB), and a bundle of
    that many members is noise anyway. The batch loop polls the calling plugin's cancel token."""
    pad = len(table)  # the zero row appended to the table
    table = np.vstack([table, np.zeros((1, WORDS), np.uint64)])
    rotated = permute(table)
    offsets = np.cumsum(lengths) - lengths
    lengths = cut_lengths(lengths, max_tokens)
    token = current()
    out = np.zeros((len(lengths), WORDS), dtype=np.uint64)
    # Sorted by length, batches hold similar lengths and waste little on padding; empty sequences
    # (sorted first) are skipped and stay zero.
    order = np.argsort(lengths, kind="stable")
    start = int(np.searchsorted(lengths[order], 1))
    while start < len(order):
        token.raise_if_cancelled()
        guess = _batch_size(int(lengths[order[start]]))
        size = _batch_size(int(lengths[order[min(start + guess, len(order)) - 1]]))
        batch = order[start : start + size]
        position = np.arange(lengths[batch[-1]])[:, None]
        at = np.minimum(offsets[batch] + position, len(flat_ids) - 1)
        ids = np.where(position < lengths[batch], flat_ids[at], pad)
        out[batch] = _ngram_majority(ids, lengths[batch], table, rotated)
        start += size
    return out


def cut_lengths(lengths: np.ndarray, max_tokens: int | None) -> np.ndarray:
    """`lengths` capped at `max_tokens` (hdc.maxUnitTokens), telling the running call's trace
    when that cut a text. Callers cut before building token vectors too: 600k distinct words in
    one claim made 3M character n-gram vectors (1.3 GB) for tokens the cap then dropped."""
    if max_tokens is None or not len(lengths) or int(lengths.max()) <= max_tokens:
        return lengths
    cut = int(np.count_nonzero(lengths > max_tokens))
    note_budget(f"hdc.maxUnitTokens: {cut:,} text(s) encoded from their first {max_tokens:,} tokens")
    return np.minimum(lengths, max_tokens)


def _batch_size(longest: int) -> int:
    return max(1, _BATCH_ROWS // (2 * longest))


def _ngram_majority(ids: np.ndarray, lengths: np.ndarray, table: np.ndarray, rotated: np.ndarray) -> np.ndarray:
    """Majority over the unigram and bigram members of a padded [longest, batch] block of token ids.

    n tokens give 2n − 1 members, so a bit is set when at least n members set it. Adding the bias
    2^w − n (w = bit length of the longest n) to every count turns that into "digit w of the sum is
    1", so the adder tree's own output is the answer and no per-unit comparison is needed.
    """
    longest, batch = ids.shape
    width = int(lengths.max()).bit_length()
    bias = (1 << width) - lengths
    planes = np.empty((2 * longest, batch, WORDS), dtype=np.uint64)
    planes[0] = _bias_plane(bias, 0)
    unigrams, bigrams = planes[1 : longest + 1], planes[longest + 1 :]
    np.take(table, ids, axis=0, out=unigrams)
    # Padding ids map to zero rows, so padded members vanish; but the pair (last token, padding)
    # would XOR to the last token's own vector, hence the explicit zeroing of that one member.
    np.take(rotated, ids[1:], axis=0, out=bigrams)
    bigrams ^= unigrams[:-1]
    short = np.flatnonzero(lengths < longest)
    bigrams[lengths[short] - 1, short] = 0
    return _sum_digit(planes, bias, width)


def _bias_plane(bias: np.ndarray, bit: int) -> np.ndarray:
    """[batch, 64]: all ones for the units whose bias has `bit` set."""
    return np.repeat(np.where((bias >> bit) & 1, _ALL_ONES, np.uint64(0))[:, None], WORDS, axis=1)


def _sum_digit(planes: np.ndarray, bias: np.ndarray, width: int) -> np.ndarray:
    """Digit `width` of (how many planes set each bit + bias); overwrites `planes`.

    A carry-save adder tree over bit-sliced planes adds 64 bit positions per word operation, where
    unpacking bits to bytes would touch 64 times more memory. `planes` already holds bit 0 of the
    bias; each higher bias bit joins the carries of its weight.
    """
    current = planes
    for weight in range(1, width + 1):
        current, carries = _compress(current)
        if np.any((bias >> weight) & 1):
            carries.append(_bias_plane(bias, weight)[None])
        current = np.concatenate(carries) if carries else current[:0]
    current, _ = _compress(current)
    return current[0] if len(current) else np.zeros(planes.shape[1:], dtype=np.uint64)


def _compress(current: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """Add up same-weight planes in place: at most one plane of this weight, plus the carries.

    Full adders work on contiguous thirds of the stack, so each round is a few large numpy calls,
    all in place: with x = a ^ b and y = a ^ c, the sum a ^ x ^ y lands in the first third and the
    carry (sum ^ (x | y), the majority of a, b, c) in the last, where it stays as a view; fresh
    temporaries cost more than the extra pass.
    """
    carries = []
    while len(current) > 2:
        third = len(current) // 3
        a, b, c = current[:third], current[third : 2 * third], current[2 * third : 3 * third]
        b ^= a
        c ^= a
        a ^= b
        a ^= c
        c |= b
        c ^= a
        rest = len(current) - 3 * third
        if rest > third:  # the leftover planes moved up below would overwrite the carry
            c = c.copy()
        current[third : third + rest] = current[3 * third :]
        current = current[: third + rest]
        carries.append(c)
    if len(current) == 2:
        carries.append(current[:1] & current[1:])
        current[:1] ^= current[1:]
        current = current[:1]
    return current, carries
