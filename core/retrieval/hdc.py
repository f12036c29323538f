"""4096-bit hyperdimensional (VSA) retrieval lane (seed 000, DESIGN §7).

Vectors are 64 packed uint64 words; bit j lives in word j // 64 at bit j % 64.

- Random HV: the 512-byte SHAKE-256 digest of `seed NUL key`, so every process agrees without state.
  Keys are namespaced: "tok:<stem>", "role:<Role>", "act:<act>".
- bind = XOR (self-inverse); ρ = rotation of the whole vector by one bit towards higher bits.
- bundle = per-bit majority. An even number of members gets one extra tie-breaking member,
  ρ(XOR of all members): it is fixed by the members alone (so bundles stay order-independent and
  deterministic) yet unrelated to each of them, so it does not pull different bundles together the
  way one shared constant tie vector would.
- Text (topic; claim, or procedure when there is no claim) is an n-gram bundle: one member per token
  (unigrams, position-free) plus bind(HV(a), ρ(HV(b))) for each adjacent pair a b (bigrams, which
  keep order). Unigrams deliberately carry no position: ρ^i-locked unigrams would only match when a
  question puts a word at the same index as the unit does, which questions almost never do; word
  order is kept by the bigrams. n tokens give 2n − 1 members, always odd, so text never needs the
  tie rule and the majority is simply "set in at least n members".

fieldScore = max(0, (sim − 0.5) × 2) = max(0, 1 − hamming / 2048); final = Σ fieldWeight × fieldScore.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain

import numpy as np

from core import cancel
from core.config import HdcConfig
from core.text import tokenize
from core.units import ACT_PREFERRED_ROLES, Act, KnowledgeUnit, Role

DIMENSIONS = 4096
WORDS = DIMENSIONS // 64
FIELDS = ("topic", "claim", "role", "acts")
_SCAN_ROWS = 1024
# Rows (members × units) per encoding batch: 1 MB of planes keeps the adder tree in the L2 cache.
_BATCH_ROWS = 1 << 11
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
    return (vectors << np.uint64(1)) | (np.roll(vectors, 1, axis=-1) >> np.uint64(63))


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


def encode_ngrams(tokens: Sequence[str], seed: str) -> np.ndarray:
    """The n-gram bundle of one token sequence (zeros when there are no tokens)."""
    if not tokens:
        return np.zeros(WORDS, dtype=np.uint64)
    table = hv_table(seed, [f"tok:{t}" for t in tokens])
    return bundle(np.vstack([table, table[:-1] ^ permute(table[1:])]))


def encode_ngrams_batch(sequences: Sequence[Sequence[str]], seed: str) -> np.ndarray:
    """`encode_ngrams` for many sequences at once, shape [len(sequences), 64]; identical results."""
    flat = list(chain.from_iterable(sequences))
    vocab = {t: i for i, t in enumerate(dict.fromkeys(flat))}
    flat_ids = np.fromiter(map(vocab.__getitem__, flat), dtype=np.int32, count=len(flat))
    pad = len(vocab)  # the zero row appended to the table
    table = np.vstack([hv_table(seed, [f"tok:{t}" for t in vocab]), np.zeros((1, WORDS), np.uint64)])
    rotated = permute(table)
    lengths = np.fromiter(map(len, sequences), dtype=np.int64, count=len(sequences))
    offsets = np.cumsum(lengths) - lengths
    out = np.zeros((len(sequences), WORDS), dtype=np.uint64)
    # Sorted by length, batches hold similar lengths and waste little on padding; empty sequences
    # (sorted first) are skipped and stay zero.
    order = np.argsort(lengths, kind="stable")
    start = int(np.searchsorted(lengths[order], 1))
    while start < len(order):
        guess = _batch_size(int(lengths[order[start]]))
        size = _batch_size(int(lengths[order[min(start + guess, len(order)) - 1]]))
        batch = order[start : start + size]
        position = np.arange(lengths[batch[-1]])[:, None]
        at = np.minimum(offsets[batch] + position, len(flat_ids) - 1)
        ids = np.where(position < lengths[batch], flat_ids[at], pad)
        out[batch] = _ngram_majority(ids, lengths[batch], table, rotated)
        start += size
    return out


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

    Full adders work on contiguous thirds of the stack, so each round is a few large numpy calls.
    """
    carries = []
    while len(current) > 2:
        third = len(current) // 3
        a, b, c = current[:third], current[third : 2 * third], current[2 * third : 3 * third]
        carry = a & b
        a ^= b
        carry |= c & a
        a ^= c
        rest = len(current) - 3 * third
        current[third : third + rest] = current[3 * third :]
        current = current[: third + rest]
        carries.append(carry)
    if len(current) == 2:
        carries.append(current[:1] & current[1:])
        current[:1] ^= current[1:]
        current = current[:1]
    return current, carries


def _unit_digest(unit: KnowledgeUnit, seed: str) -> bytes:
    return hashlib.blake2b(f"{seed}\x00{unit.topic}\x00{unit.body}".encode(), digest_size=16).digest()


class UnitVectorCache:
    """Topic and body vectors per unit id, reused across rebuilds while the unit's text is unchanged.

    Keyed by unit id and checked against a digest of the encoded text (and seed), so an edited unit
    is re-encoded and every other unit is reused. `encoded` counts units encoded so far.
    """

    def __init__(self) -> None:
        self._entries: dict[str, tuple[bytes, np.ndarray, np.ndarray]] = {}
        self.encoded = 0

    def vectors(self, units: Sequence[KnowledgeUnit], seed: str) -> tuple[np.ndarray, np.ndarray]:
        """Topic and body vectors of `units`, [N, 64] each, encoding only new or edited units."""
        digests = [_unit_digest(u, seed) for u in units]
        stale = [i for i, (u, d) in enumerate(zip(units, digests, strict=True)) if self._digest(u.id) != d]
        topic, claim = _encode_units([units[i] for i in stale], seed)
        for j, i in enumerate(stale):
            self._entries[units[i].id] = (digests[i], topic[j], claim[j])
        self.encoded += len(stale)
        if len(stale) < len(units):
            topic = np.array([self._entries[u.id][1] for u in units]).reshape(-1, WORDS)
            claim = np.array([self._entries[u.id][2] for u in units]).reshape(-1, WORDS)
        return topic, claim

    def has(self, unit: KnowledgeUnit, seed: str) -> bool:
        return self._digest(unit.id) == _unit_digest(unit, seed)

    def add(self, units: Sequence[KnowledgeUnit], seed: str, topic: np.ndarray, claim: np.ndarray) -> None:
        """Vectors computed elsewhere (the index store), row i for units[i]."""
        for i, unit in enumerate(units):
            self._entries[unit.id] = (_unit_digest(unit, seed), topic[i], claim[i])

    def _digest(self, unit_id: str) -> bytes | None:
        entry = self._entries.get(unit_id)
        return entry[0] if entry else None


def _encode_units(units: Sequence[KnowledgeUnit], seed: str) -> tuple[np.ndarray, np.ndarray]:
    """Topic and body n-gram vectors, [len(units), 64] each; read-only, as the cache shares them."""
    vectors = encode_ngrams_batch([tokenize(u.topic) for u in units] + [tokenize(u.body) for u in units], seed)
    vectors.flags.writeable = False
    return vectors[: len(units)], vectors[len(units) :]


@dataclass(frozen=True)
class HdcQuery:
    """A query's field vectors; `text` is None when no query token survived the text pipeline."""

    text: np.ndarray | None
    role: np.ndarray
    act: np.ndarray


def encode_query(tokens: Sequence[str], act: Act, config: HdcConfig) -> HdcQuery:
    """Query tokens (already through core.text) for topic and claim, preferred roles, the act."""
    roles = np.array([hv(config.seed, f"role:{r.value}") for r in ACT_PREFERRED_ROLES[act]])
    return HdcQuery(
        text=encode_ngrams(tokens, config.seed) if tokens else None,
        role=bundle(roles),
        act=hv(config.seed, f"act:{act.value}"),
    )


class HdcIndex:
    """Unit field vectors of one permitted view; rows follow `unit_ids`.

    Topic and claim are full [N, 64] matrices. Role and acts take few distinct values, so they are
    small tables of distinct vectors plus a per-unit index: each distinct vector is scored once.
    """

    def __init__(
        self,
        unit_ids: list[str],
        topic: np.ndarray,
        claim: np.ndarray,
        role_table: np.ndarray,
        role_of: np.ndarray,
        acts_table: np.ndarray,
        acts_of: np.ndarray,
        config: HdcConfig,
    ):
        self.unit_ids = unit_ids
        self.topic = topic
        self.claim = claim
        self.role_table = role_table
        self.role_of = role_of
        self.acts_table = acts_table
        self.acts_of = acts_of
        self.config = config
        self._row = {uid: i for i, uid in enumerate(unit_ids)}

    @classmethod
    def build(
        cls, units: Sequence[KnowledgeUnit], config: HdcConfig, cache: UnitVectorCache | None = None
    ) -> HdcIndex:
        topic, claim = (cache if cache is not None else UnitVectorCache()).vectors(units, config.seed)
        roles = {r: i for i, r in enumerate(dict.fromkeys(u.role for u in units))}
        act_sets = {a: i for i, a in enumerate(dict.fromkeys(u.acts for u in units))}
        return cls(
            unit_ids=[u.id for u in units],
            topic=topic,
            claim=claim,
            role_table=_role_table(list(roles), config.seed),
            role_of=np.array([roles[u.role] for u in units], dtype=np.intp),
            acts_table=_acts_table(list(act_sets), config.seed),
            acts_of=np.array([act_sets[u.acts] for u in units], dtype=np.intp),
            config=config,
        )

    def __len__(self) -> int:
        return len(self.unit_ids)

    def scores(self, query: HdcQuery) -> np.ndarray:
        """Final HDC score of every unit, float64; in [0, 1] while the field weights sum to 1."""
        weights = self.config.field_weights
        total = weights.get("role", 0.0) * field_scores(hamming(self.role_table, query.role))[self.role_of]
        total += weights.get("acts", 0.0) * field_scores(hamming(self.acts_table, query.act))[self.acts_of]
        if query.text is not None:
            total += weights.get("topic", 0.0) * field_scores(hamming(self.topic, query.text))
            total += weights.get("claim", 0.0) * field_scores(hamming(self.claim, query.text))
        return total

    def field_similarities(self, query: HdcQuery, unit_id: str) -> dict[str, float]:
        """Per field: the raw similarity ("topic") and the shifted field score ("topic_score").

        Topic and claim are absent when the query has no text to compare.
        """
        row = self._row[unit_id]
        pairs = {
            "role": (self.role_table[self.role_of[row]], query.role),
            "acts": (self.acts_table[self.acts_of[row]], query.act),
        }
        if query.text is not None:
            pairs = {"topic": (self.topic[row], query.text), "claim": (self.claim[row], query.text), **pairs}
        out = {}
        for field in (f for f in FIELDS if f in pairs):
            sim = similarity(*pairs[field])
            out[field] = sim
            out[f"{field}_score"] = max(0.0, (sim - 0.5) * 2)
        return out


def _role_table(roles: list[Role], seed: str) -> np.ndarray:
    return np.array([hv(seed, f"role:{r.value}") for r in roles], dtype=np.uint64).reshape(-1, WORDS)


def _acts_table(act_sets: list[tuple[Act, ...]], seed: str) -> np.ndarray:
    rows = [bundle(np.array([hv(seed, f"act:{a.value}") for a in acts])) for acts in act_sets]
    return np.array(rows, dtype=np.uint64).reshape(-1, WORDS)


def hamming(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """Hamming distance of each row of `matrix` to `vector`, uint16.

    Chunks of 1024 rows with preallocated buffers keep the XOR and popcount temporaries in cache.
    """
    n = len(matrix)
    out = np.empty(n, dtype=np.uint16)
    xored = np.empty((min(n, _SCAN_ROWS), WORDS), dtype=np.uint64)
    counts = np.empty(xored.shape, dtype=np.uint8)
    token = cancel.current()
    for start in range(0, n, _SCAN_ROWS):
        # A scan of a million units takes a while: a cancelled plugin call stops between chunks.
        token.raise_if_cancelled()
        stop = min(start + _SCAN_ROWS, n)
        rows = stop - start
        np.bitwise_xor(matrix[start:stop], vector, out=xored[:rows])
        np.bitwise_count(xored[:rows], out=counts[:rows])
        counts[:rows].sum(axis=1, dtype=np.uint16, out=out[start:stop])
    return out


def field_scores(distances: np.ndarray) -> np.ndarray:
    """max(0, (sim − 0.5) × 2) with sim = 1 − d / 4096, i.e. max(0, 1 − d / 2048)."""
    return np.maximum(0.0, 1.0 - distances / (DIMENSIONS / 2))
