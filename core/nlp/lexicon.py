"""Lemmas, synonyms, hypernyms, antonyms and derivations from Open English WordNet 2025.

`lexicon()` is the process-wide instance, loaded on first use from core/nlp/data/lexicon.bin.gz
(written by scripts/build_lexicon.py; layout in its docstring). Every query takes a word as it
appears in text and looks it up under each of its lemmas: "shoes" is both the lemma `shoes`
("a particular situation") and a form of `shoe`, so `hypernyms("shoes")` holds footwear.
`pos` is optional everywhere and may be a UPOS tag (NOUN, VERB, AUX, ADJ, ADV, PROPN) or a
WordNet code (n, v, a, s, r); a closed-class tag (DET, ADP, PRON, NUM, …) finds nothing.

`link(a, b)` says how two words relate, with a reason a reader can check ("notebook ≈ laptop:
both kinds of portable computer").
"""

from __future__ import annotations

import gzip
import json
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal, cast

import numpy as np

from core.nlp.lazy import Lazy
from core.nlp.unpacked import load_unpacked

DATA = Path(__file__).resolve().parent / "data" / "lexicon.bin.gz"
FORMAT = "mrptui-lexicon/1"
POS = "nvar"
NOUN, VERB = 0, 1
CACHE_WORDS = 1 << 14
# link(): how many of a lemma's senses count (WordNet lists the commonest first), and how many
# direct hyponyms a shared hypernym may have for its hyponyms to count as related.
LINK_SENSES = 5
# Hypernym and sister-term links read only each lemma's commonest senses: over five senses a
# word is a kind of too much ("stack ≈ disks: both kinds of memory device" through stack's fifth
# sense). Two keeps "notebook ≈ laptop" (the computer is notebook's second sense).
HYPERNYM_SENSES = 2
SIBLINGS_MAX = 20
POS_NAMES = ("noun", "verb", "adjective", "adverb")
_UPOS = {"NOUN": 0, "PROPN": 0, "VERB": 1, "AUX": 1, "ADJ": 2, "ADV": 3}
_WN = {"n": 0, "v": 1, "a": 2, "s": 2, "r": 3}

LinkKind = Literal["same-lemma", "synonym", "hypernym", "derivation", "antonym"]


@dataclass(frozen=True)
class Link:
    """How `a` relates to `b`, and why, in words a reader can check against WordNet."""

    kind: LinkKind
    a: str
    b: str
    via: str
    # For a hypernym link, the word that is a kind of the other ("a" or "b"); "" for sister terms
    # ("notebook ≈ laptop") and the other kinds.
    narrower: Literal["a", "b", ""] = ""


def _pos_codes(pos: str | None) -> tuple[int, ...]:
    if pos is None:
        return (0, 1, 2, 3)
    code = _UPOS.get(pos, _WN.get(pos))
    return () if code is None else (code,)


class Lexicon:
    """Read-only arrays; lookups bisect sorted word lists, so loading builds no big dicts."""

    def __init__(self, arrays: dict[str, np.ndarray | list[str] | _Glosses], rules: list[list[list[str]]]) -> None:
        # WordNet's detachment rules (Morphy) for regular inflections, per part of speech, as nltk
        # has them (copied into the file by the build); irregular inflections are stored forms.
        self._rules = tuple(tuple((old, new) for old, new in pos_rules) for pos_rules in rules)
        # Each part's endings in one tuple: most words the tagger asks about (every noun, verb,
        # adjective and adverb it tags) end in none of them, and one `endswith` says so.
        self._endings = tuple(tuple(old for old, _ in pos_rules) for pos_rules in self._rules)
        # What `load` puts under each name: a "str" section is a list of lines, the glosses a
        # `_Glosses`, every other section (all that `_a` is read for) an array.
        self._words = cast(list[str], arrays["words"])
        self._forms = cast(list[str], arrays["forms"])
        self._glosses = cast(_Glosses, arrays["glosses"])
        self._a = cast(dict[str, np.ndarray], arrays)
        self._synset_pos = self._a["synset_pos"]
        # Rows are sorted by their first word: a pointer per word finds a word's rows directly.
        # Built on first use (~1 ms a relation): only antonyms, derivations and links read them,
        # and tagging asks for none of those.
        self._pair_ptr: dict[str, np.ndarray] = {}
        self._hyponyms = np.bincount(self._a["hypernym"], minlength=len(self._synset_pos))
        # A support check asks about the same few question words again and again.
        self._candidates = lru_cache(maxsize=CACHE_WORDS)(self._find_candidates)
        self._synsets = lru_cache(maxsize=CACHE_WORDS)(self._find_synsets)
        # The tagger asks for every noun, verb, adjective and adverb it tags (`wordnet_revise`).
        self._parts = lru_cache(maxsize=CACHE_WORDS)(self._find_parts)

    # -- lookup ------------------------------------------------------------------------------

    @staticmethod
    def _find(sorted_words: list[str], word: str) -> int | None:
        i = bisect_left(sorted_words, word)
        return i if i < len(sorted_words) and sorted_words[i] == word else None

    def _row(self, name: str, i: int) -> list[int]:
        ptr = self._a[name + "_ptr"]
        return self._a[name][ptr[i] : ptr[i + 1]].tolist()

    def _senses(self, wid: int, codes: tuple[int, ...]) -> list[int]:
        return [s for s in self._row("sense", wid) if self._synset_pos[s] in codes]

    def _members(self, synset: int) -> list[str]:
        return [self._words[w] for w in self._row("member", synset)]

    def _find_candidates(self, word: str, pos: str | None) -> tuple[tuple[int, int], ...]:
        """(word id, pos code) of every lemma `word` may be a form of, the likeliest first.

        Likeliest = the most WordNet senses in that part of speech, the word itself on a tie
        (nltk's WordNetLemmatizer picks the shortest instead, which turns "species" into "specie").
        """
        text = " ".join(word.lower().split())
        codes = _pos_codes(pos)
        found: dict[tuple[int, int], int] = {}
        form = self._find(self._forms, text)
        stored = self._row("form", form) if form is not None else []
        # The word itself (and a base two rules share) is a base in every part of speech:
        # searched once, not once per part (~5 bisections of 150k words on an unknown word).
        searched: dict[str, int | None] = {}
        for code in codes:
            bases = [text]
            if text.endswith(self._endings[code]):
                bases += [text[: -len(old)] + new for old, new in self._rules[code] if text.endswith(old)]
            for base in bases:
                if base and base not in searched:
                    searched[base] = self._find(self._words, base)
            ids = [searched[b] for b in bases if b]
            ids += [t // len(POS) for t in stored if t % len(POS) == code]
            for wid in ids:
                if wid is not None and (wid, code) not in found:
                    senses = len(self._senses(wid, (code,)))
                    if senses:
                        found[(wid, code)] = senses
        return tuple(sorted(found, key=lambda k: (-found[k], self._words[k[0]] != text, len(self._words[k[0]]))))

    def _find_synsets(self, word: str, pos: str | None, limit: int | None = None) -> tuple[int, ...]:
        """Every sense of every lemma of `word`, likeliest lemma first; with `limit`, only each
        lemma's first `limit` senses in each part of speech (WordNet lists the commonest first)."""
        return tuple(
            synset for wid, code in self._candidates(word, pos) for synset in self._senses(wid, (code,))[:limit]
        )

    # -- the API -----------------------------------------------------------------------------

    def lemma(self, word: str, pos: str | None = None) -> str:
        """The likeliest dictionary form of `word` (lower-cased); the word itself when unknown."""
        candidates = self._candidates(word, pos)
        return self._words[candidates[0][0]] if candidates else " ".join(word.lower().split())

    def knows(self, word: str) -> bool:
        """Whether `word` is a form of some lemma. `link` relates two words only when both are
        known or they are spelt the same: a caller linking one word to many skips the rest."""
        return bool(self._candidates(word, None))

    def parts_of_speech(self, word: str) -> frozenset[str]:
        """WordNet codes (n, v, a, r) of the parts of speech `word` is a form of some lemma in."""
        return self._parts(word)

    def _find_parts(self, word: str) -> frozenset[str]:
        return frozenset(POS[code] for _, code in self._candidates(word, None))

    def lemmas(self, word: str, pos: str | None = None) -> frozenset[str]:
        return frozenset(self._words[wid] for wid, _ in self._candidates(word, pos))

    def synonyms(self, word: str, pos: str | None = None) -> frozenset[str]:
        """Every other member of every synset of `word`."""
        own = self.lemmas(word, pos)
        return frozenset(m for s in self._synsets(word, pos) for m in self._members(s)) - own

    def hypernyms(self, word: str, depth: int = 2, pos: str | None = None) -> frozenset[str]:
        """Members of the synsets up to `depth` hypernym steps above any sense of `word`."""
        ancestors = self._ancestors(self._synsets(word, pos), depth)
        return frozenset(m for s, *_ in ancestors for m in self._members(s))

    def classes(self, word: str, pos: str | None = None, depth: int = 8, senses: int = 1) -> frozenset[str]:
        """Members of the synsets up to `depth` steps above the commonest `senses` senses of each
        lemma of `word` (WordNet lists the commonest first): what the word usually is a kind of,
        without its rare senses ("boatyard" is a place, never a person)."""
        ancestors = self._ancestors(self._synsets(word, pos, senses), depth)
        return frozenset(m for s, *_ in ancestors for m in self._members(s))

    def antonyms(self, word: str, pos: str | None = None) -> frozenset[str]:
        return frozenset(self._words[row[2]] for row in self._sense_pairs("antonyms", word, pos))

    def derivations(self, word: str, pos: str | None = None) -> frozenset[str]:
        """Members of the synsets derivationally related to a sense of `word` or its synonyms
        (swap = switch (v) → switch (n) = replacement)."""
        own = self.lemmas(word, pos)
        derived = self._derived(self._synsets(word, pos))
        return frozenset(m for *_, target in derived for m in self._members(target)) - own

    def gloss(self, synset: int) -> str:
        return self._glosses[synset]

    # -- relations ---------------------------------------------------------------------------

    def _pairs(self, name: str, wid: int) -> np.ndarray:
        ptr = self._pair_ptr.get(name)
        if ptr is None:
            # Each word's first row: the rows are sorted by word id (0 to words - 1), so it is the
            # count of rows before that word. Counted, not a binary search per word of the 127k
            # (2-3 ms of every ask whose answer asks for antonyms or derivations; issue 41).
            # Two threads may both build it: the same array either way.
            words = len(self._words)
            ptr = np.zeros(words + 1, dtype=np.intp)
            np.cumsum(np.bincount(self._a[name][:, 0], minlength=words)[:words], out=ptr[1:])
            self._pair_ptr[name] = ptr
        return self._a[name][ptr[wid] : ptr[wid + 1]]

    def _sense_pairs(self, name: str, word: str, pos: str | None, limit: int | None = None) -> Iterator[list[int]]:
        """Rows (word, synset, other word, other synset) from a sense of `word`."""
        senses = set(self._synsets(word, pos, limit))
        for wid, _ in self._candidates(word, pos):
            for row in self._pairs(name, wid).tolist():
                if row[1] in senses:
                    yield row

    def _derived(self, synsets: Iterable[int]) -> Iterator[tuple[str, str, int]]:
        """(member of one of `synsets`, the word derived from it, the derived word's synset)."""
        for synset in synsets:
            for member in self._row("member", synset):
                for row in self._pairs("derivations", member).tolist():
                    if row[1] == synset:
                        yield self._words[member], self._words[row[2]], row[3]

    def _ancestors(self, synsets: Iterable[int], depth: int) -> Iterator[tuple[int, int, int | None, int]]:
        """(hypernym synset, steps, the synset one step below it when that is itself a hypernym,
        the synset of `synsets` it is above) for every hypernym, each once, nearest first."""
        seen: set[int] = set()
        frontier: list[tuple[int, int]] = [(s, s) for s in synsets]
        for step in range(1, max(depth, 0) + 1):
            below = frontier
            frontier = []
            for synset, origin in below:
                for parent in self._row("hypernym", synset):
                    if parent not in seen:
                        seen.add(parent)
                        frontier.append((parent, origin))
                        yield parent, step, (synset if step > 1 else None), origin

    # -- link --------------------------------------------------------------------------------

    def link(self, a: str, b: str, *, pos_a: str | None = None, pos_b: str | None = None) -> Link | None:
        """The closest relation between two words, tried in this order: the same lemma, antonyms,
        a shared sense (or WordNet's `similar`), a hypernym either way, a shared direct hypernym,
        a derivation (directly or through a synonym). None otherwise.

        Only each lemma's LINK_SENSES commonest senses count, a verb's hypernym only one step up,
        and a shared hypernym only when it is a noun with at most SIBLINGS_MAX direct hyponyms:
        WordNet's rare senses and its broad verb classes ("change", "cause") would otherwise link
        141 of 3,000 random pairs of sample_kb's words (`recommend is a kind of change, a kind of
        cause`); with these limits 40 link, and every pair docs/nlp.md names still links.
        `pos_a`/`pos_b` (UPOS or WordNet codes) keep each word to that part of speech."""
        x, y = _Word(a, pos_a), _Word(b, pos_b)
        found: tuple[LinkKind, str] | tuple[LinkKind, str, str] | None = self._same_lemma(x, y)
        # A word the lexicon has no lemma of (a name, a code, a coined word) has no sense to
        # relate: only its own spelling links it, and the four searches below would find nothing.
        if not found and self._candidates(a, pos_a) and self._candidates(b, pos_b):
            found = self._antonym(x, y) or self._synonym(x, y) or self._hypernym(x, y) or self._derivation(x, y)
        return Link(found[0], a, b, *found[1:]) if found else None

    def _common(self, word: _Word) -> tuple[int, ...]:
        return self._synsets(word.text, word.pos, LINK_SENSES)

    def _named(self, word: _Word, synset: int) -> str:
        """`word`'s lemma among the synset's members ("break" for "broken"), else the word."""
        lemmas = self.lemmas(word.text, word.pos)
        return next((m for m in self._members(synset) if m in lemmas), word.text)

    def _same_lemma(self, a: _Word, b: _Word) -> tuple[LinkKind, str] | None:
        if " ".join(a.text.lower().split()) == " ".join(b.text.lower().split()):
            return "same-lemma", f"{a} = {b}: the same word"
        theirs = self.lemmas(b.text, b.pos)
        shared = [self._words[wid] for wid, _ in self._candidates(a.text, a.pos) if self._words[wid] in theirs]
        return ("same-lemma", f"{a} = {b}: both forms of {shared[0]}") if shared else None

    def _antonym(self, a: _Word, b: _Word) -> tuple[LinkKind, str] | None:
        theirs = set(self._common(b))
        for row in self._sense_pairs("antonyms", a.text, a.pos, LINK_SENSES):
            if row[3] in theirs:
                first, second = self._words[row[0]], self._words[row[2]]
                return "antonym", f"{a} ↔ {b}: {first} is the opposite of {second} ({self.gloss(row[1])})"
        return None

    def _synonym(self, a: _Word, b: _Word) -> tuple[LinkKind, str] | None:
        theirs, mine = set(self._common(b)), self._common(a)
        for synset in mine:
            if synset in theirs:
                return "synonym", f"{a} ≈ {b}: same sense, {self.gloss(synset)!r}"
        for synset in mine:
            for other in self._row("similar", synset):
                if other in theirs:
                    return "synonym", f"{a} ≈ {b}: similar senses, {self.gloss(synset)!r} ~ {self.gloss(other)!r}"
        return None

    def _hypernym(self, a: _Word, b: _Word) -> tuple[LinkKind, str, str] | None:
        """A hypernym link between the words' commonest senses (HYPERNYM_SENSES), saying which
        sense of the lower word it goes through when the word has others."""
        for low, high, sign, narrower in ((a, b, "→", "a"), (b, a, "←", "b")):
            targets = set(self._synsets(high.text, high.pos, HYPERNYM_SENSES))
            for synset, steps, via, origin in self._ancestors(self._synsets(low.text, low.pos, HYPERNYM_SENSES), 2):
                if synset in targets and (steps == 1 or self._synset_pos[synset] != VERB):
                    middle = "" if via is None else f"{self._members(via)[0]}, a kind of "
                    chain = f"{self._named(low, origin)} is a kind of {middle}{self._named(high, synset)}"
                    return "hypernym", f"{a} {sign} {b}: {chain}{self._sense(low, origin)}", narrower
        mine = self._synsets(a.text, a.pos, HYPERNYM_SENSES)
        parents = {s: origin for s, _, _, origin in self._ancestors(self._synsets(b.text, b.pos, HYPERNYM_SENSES), 1)}
        for synset, _, _, origin in self._ancestors(mine, 1):
            if synset in parents and self._synset_pos[synset] == NOUN and self._hyponyms[synset] <= SIBLINGS_MAX:
                senses = f"{self._sense(a, origin)}{self._sense(b, parents[synset])}"
                return "hypernym", f"{a} ≈ {b}: both kinds of {self._members(synset)[0]}{senses}", ""
        return None

    def _sense(self, word: _Word, synset: int) -> str:
        """ "; notebook as 'a small compact portable computer'" when the word has other senses."""
        if len(self._synsets(word.text, word.pos, HYPERNYM_SENSES)) < 2:
            return ""
        return f"; {word} as {self.gloss(synset)!r}"

    def _derivation(self, a: _Word, b: _Word) -> tuple[LinkKind, str] | None:
        for x, y in ((a, b), (b, a)):
            theirs = set(self._common(y))
            own, their_lemmas = self.lemmas(x.text, x.pos), self.lemmas(y.text, y.pos)
            for member, derived, target in self._derived(self._common(x)):
                if target in theirs:
                    source = f"{x}" if member in own else f"{x} = {member}"
                    result = derived if derived in their_lemmas else f"{derived} = {y}"
                    pos = POS_NAMES[self._synset_pos[target]]
                    return "derivation", f"{x} → {y}: {source} → {result} ({pos}), {self.gloss(target)!r}"
        return None


@dataclass(frozen=True)
class _Word:
    """A lexicon entry's word and its part of speech, where the entry gives one."""

    text: str
    pos: str | None

    def __str__(self) -> str:
        return self.text


class _Lines:
    """Lines of a UTF-8 blob inside `raw`, decoded one at a time on demand."""

    def __init__(self, raw: bytes, offset: int, size: int) -> None:
        self._blob = memoryview(raw)[offset : offset + size]
        ends = np.flatnonzero(np.frombuffer(self._blob, dtype=np.uint8) == ord("\n"))
        self._starts = np.concatenate(([0], ends + 1))
        self._ends = np.concatenate((ends, [size]))

    def __len__(self) -> int:
        return len(self._starts)

    def __getitem__(self, i: int) -> str:
        return bytes(self._blob[self._starts[i] : self._ends[i]]).decode("utf-8")


def _all_lines(raw: bytes, offset: int, size: int) -> list[str]:
    """Every line of a UTF-8 blob inside `raw`, split at once: `_Lines`' line offsets are for
    reading a few lines (2-6 ms more for the 127k words, in every process that tags)."""
    return str(memoryview(raw)[offset : offset + size], "utf-8").split("\n")


class _Glosses:
    """The glosses, read when the first one is asked for: only a link's reason quotes them, and
    they are half of the decompressed file (core/nlp/unpacked.py keeps them in a file of their own)."""

    def __init__(self, path: Path, size: int) -> None:
        self._lines = Lazy(lambda: _Lines(_read_glosses(path, size), 0, size))

    def __getitem__(self, i: int) -> str:
        return self._lines.get()[i]


def load(path: Path = DATA) -> Lexicon:
    """The lexicon `path` holds (written by scripts/build_lexicon.py)."""
    # Decompressed once per cache (core/nlp/unpacked.py), without the glosses.
    raw = load_unpacked(path, lambda packed: _split(gzip.decompress(packed), path)[0], bytes, _checked(path))
    header, sections = _sections(raw, path)
    arrays: dict[str, np.ndarray | list[str] | _Glosses] = {}
    offset = raw.index(b"\n") + 1
    for spec, size in sections:
        if spec["name"] == "glosses":
            arrays["glosses"] = _Glosses(path, size)
            continue
        if spec["dtype"] == "str":
            arrays[spec["name"]] = _all_lines(raw, offset, size)
        else:
            dtype = np.dtype(spec["dtype"])
            arrays[spec["name"]] = np.frombuffer(raw, dtype=dtype, count=size // dtype.itemsize, offset=offset).reshape(
                spec["shape"]
            )
        offset += size
    return Lexicon(arrays, header["morphy"])


def _sections(raw: bytes, path: Path) -> tuple[dict, list[tuple[dict, int]]]:
    """The header, and each array's spec with its size in bytes, in file order."""
    header = json.loads(raw[: raw.index(b"\n")])
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueError(f"{path}: not a {FORMAT} file")
    sizes = [
        spec["shape"][0] if spec["dtype"] == "str" else int(np.prod(spec["shape"])) * np.dtype(spec["dtype"]).itemsize
        for spec in header["arrays"]
    ]
    return header, list(zip(header["arrays"], sizes))


def _split(raw: bytes, path: Path) -> tuple[bytes, bytes]:
    """The decompressed file without its glosses, and the glosses."""
    offset = raw.index(b"\n") + 1
    header, sections = _sections(raw, path)
    for spec, size in sections:
        if spec["name"] == "glosses":
            break
        offset += size
    else:
        raise ValueError(f"{path}: no glosses")
    whole = raw.index(b"\n") + 1 + sum(size for _, size in sections)
    if whole != len(raw):
        raise ValueError(f"{path}: {len(raw) - whole} bytes after the last array")
    return raw[:offset] + raw[offset + size :], raw[offset : offset + size]


def _checked(path: Path):
    """Restore a stored file only when it holds every array but the glosses (an earlier version
    stored them all: that file is then made again)."""

    def restore(raw: bytes) -> bytes:
        _, sections = _sections(raw, path)
        if raw.index(b"\n") + 1 + sum(size for spec, size in sections if spec["name"] != "glosses") != len(raw):
            raise ValueError(f"{path}: not the arrays without the glosses")
        return raw

    return restore


def _read_glosses(path: Path, size: int) -> bytes:
    glosses = load_unpacked(path, lambda packed: _split(gzip.decompress(packed), path)[1], bytes, bytes, part="glosses")
    if len(glosses) != size:
        raise ValueError(f"{path}: the glosses are {len(glosses)} bytes, not {size}")
    return glosses


_LEXICON: Lazy[Lexicon] = Lazy(load)


def lexicon() -> Lexicon:
    """The process-wide lexicon, loaded on first use."""
    return _LEXICON.get()
