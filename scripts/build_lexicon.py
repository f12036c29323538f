"""Derive the shipped lexicon (core/nlp/data/lexicon.bin.gz) from Open English WordNet 2025.

    python scripts/build_lexicon.py [--oewn FILE] [--out FILE] [--gloss-chars 90]

Keeps only what core.nlp.lexicon answers: lemmas (lower-cased) with their senses in WordNet's
order, the stored inflected forms (carried → carry, mice → mouse), each synset's members, part of
speech, direct hypernyms, `similar` links and a gloss cut at a word boundary, and the antonym and
derivation sense relations. Everything else (examples, pronunciations, meronyms, …) is dropped.

Layout (read by core.nlp.lexicon): gzip of one JSON header line (the format, nltk's Morphy rules
for regular inflections, each array's name, dtype and shape), then the arrays' little-endian
bytes in header order. Strings travel as one UTF-8 blob joined by newlines. No pickle anywhere;
gzip without a timestamp, so a re-run writes the same bytes.

The lexicon is Adapted Material of OEWN 2025 under CC BY 4.0 (see NOTICE).
"""

from __future__ import annotations

import argparse
import gc
import gzip
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from xml.parsers import expat

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OEWN = ROOT.parent / "shared" / "lexicon" / "oewn-2025.xml.gz"
DEFAULT_OUT = ROOT / "core" / "nlp" / "data" / "lexicon.bin.gz"
FORMAT = "mrptui-lexicon/1"
POS = "nvar"  # index = the stored part-of-speech code; adjective satellites ("s") are adjectives
HYPERNYM_TYPES = {"hypernym", "instance_hypernym"}
SENSE_TYPES = {"antonym": "antonyms", "derivation": "derivations"}


@dataclass
class Parsed:
    # word, pos, forms, sense ids, whether the entry is written with a capital (a name: "Town", "Job")
    entries: list[tuple[str, int, list[str], list[str], bool]] = field(default_factory=list)
    sense_synset: dict[str, str] = field(default_factory=dict)
    sense_word: dict[str, str] = field(default_factory=dict)
    sense_links: dict[str, list[tuple[str, str]]] = field(default_factory=lambda: {k: [] for k in SENSE_TYPES.values()})
    synsets: list[tuple[str, int, list[str], str, list[str], list[str]]] = field(default_factory=list)
    entry_word: dict[str, str] = field(default_factory=dict)


def _pos(code: str) -> int:
    return POS.index("a" if code == "s" else code)


def _gloss(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0] + "…"


def parse(path: Path, gloss_chars: int) -> Parsed:
    """One pass of expat's callbacks over the XML: no element tree is built, since all but a few
    of its elements (examples, pronunciations, other relations) are dropped at once."""
    reader = _Reader(Parsed(), gloss_chars)
    parser = expat.ParserCreate()
    parser.buffer_text = True
    parser.StartElementHandler = reader.start
    parser.EndElementHandler = reader.end
    parser.CharacterDataHandler = reader.text
    with gzip.open(path, "rb") as stream:
        parser.ParseFile(stream)
    return reader.parsed


class _Reader:
    """Collects a LexicalEntry or Synset from its elements' start tags and stores it at its end
    tag; a Definition's text is its first text, as ElementTree's `.text`."""

    def __init__(self, parsed: Parsed, gloss_chars: int) -> None:
        self.parsed, self.gloss_chars = parsed, gloss_chars
        self.entry_id = ""
        self.lemma: dict[str, str] = {}
        self.forms: list[str] = []
        self.senses: list[str] = []
        self.synset: dict[str, str] = {}
        self.definition: list[str] | None = None
        self.hypernyms: list[str] = []
        self.similar: list[str] = []
        self.in_definition = False
        self.starts = {
            "LexicalEntry": self._start_entry,
            "Lemma": self._lemma,
            "Form": self._form,
            "Sense": self._sense,
            "SenseRelation": self._sense_relation,
            "Synset": self._start_synset,
            "Definition": self._definition,
            "SynsetRelation": self._synset_relation,
        }

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        self.in_definition = False
        handler = self.starts.get(tag)
        if handler is not None:
            handler(attrs)

    def end(self, tag: str) -> None:
        self.in_definition = False
        if tag == "LexicalEntry":
            self._end_entry()
        elif tag == "Synset":
            self._end_synset()

    def text(self, data: str) -> None:
        if self.in_definition and self.definition is not None:
            self.definition.append(data)

    def _start_entry(self, attrs: dict[str, str]) -> None:
        self.entry_id, self.lemma, self.forms, self.senses = attrs["id"], {}, [], []

    def _lemma(self, attrs: dict[str, str]) -> None:
        if not self.lemma:
            self.lemma = attrs

    def _form(self, attrs: dict[str, str]) -> None:
        self.forms.append(attrs["writtenForm"])

    def _sense(self, attrs: dict[str, str]) -> None:
        self.senses.append(attrs["id"])
        self.parsed.sense_synset[attrs["id"]] = attrs["synset"]

    def _sense_relation(self, attrs: dict[str, str]) -> None:
        kind = SENSE_TYPES.get(attrs.get("relType", ""))
        if kind:
            self.parsed.sense_links[kind].append((self.senses[-1], attrs["target"]))

    def _end_entry(self) -> None:
        parsed, written = self.parsed, self.lemma["writtenForm"]
        word = written.lower()
        parsed.entry_word[self.entry_id] = word
        for sid in self.senses:
            parsed.sense_word[sid] = word
        forms = sorted({f.lower() for f in self.forms} - {word})
        parsed.entries.append((word, _pos(self.lemma["partOfSpeech"]), forms, self.senses, written != word))

    def _start_synset(self, attrs: dict[str, str]) -> None:
        self.synset, self.definition, self.hypernyms, self.similar = attrs, None, [], []

    def _definition(self, attrs: dict[str, str]) -> None:
        if self.definition is None:
            self.definition, self.in_definition = [], True

    def _synset_relation(self, attrs: dict[str, str]) -> None:
        kind = attrs.get("relType")
        if kind in HYPERNYM_TYPES:
            self.hypernyms.append(attrs["target"])
        elif kind == "similar":
            self.similar.append(attrs["target"])

    def _end_synset(self) -> None:
        synset = self.synset
        gloss = _gloss("".join(self.definition), self.gloss_chars) if self.definition is not None else ""
        members = synset["members"].split()
        pos = _pos(synset["partOfSpeech"])
        self.parsed.synsets.append((synset["id"], pos, members, gloss, self.hypernyms, self.similar))


def _csr(rows: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    ptr = np.zeros(len(rows) + 1, dtype=np.int32)
    ptr[1:] = np.cumsum([len(r) for r in rows])
    flat = np.fromiter((x for r in rows for x in r), dtype=np.int32, count=int(ptr[-1]))
    return ptr, flat


def _unique(items: list[int]) -> list[int]:
    return list(dict.fromkeys(items))


def arrays(parsed: Parsed) -> dict[str, np.ndarray | str]:
    parsed.synsets.sort(key=lambda s: s[0])
    synset_index = {s[0]: i for i, s in enumerate(parsed.synsets)}
    words = sorted({e[0] for e in parsed.entries})
    word_index = {w: i for i, w in enumerate(words)}

    # A word's senses: its entries' senses in WordNet order (the most frequent first), nouns first.
    # Lower-casing merges a common noun's entry with a name's ("town" and the architect Ithiel
    # Town); WordNet orders senses within an entry only, so the common entry's senses go first.
    senses: list[list[int]] = [[] for _ in words]
    for word, pos, _, sense_ids, _ in sorted(parsed.entries, key=lambda e: (e[1], e[4])):
        senses[word_index[word]] += [synset_index[parsed.sense_synset[s]] for s in sense_ids]
    senses = [_unique(s) for s in senses]

    form_targets: dict[str, set[int]] = {}
    for word, pos, forms, _, _ in parsed.entries:
        for form in forms:
            form_targets.setdefault(form, set()).add(word_index[word] * len(POS) + pos)
    forms = sorted(form_targets)

    members = [_unique([word_index[parsed.entry_word[m]] for m in s[2]]) for s in parsed.synsets]
    hypernyms = [_unique([synset_index[t] for t in s[4] if t in synset_index]) for s in parsed.synsets]
    similar = [_unique([synset_index[t] for t in s[5] if t in synset_index]) for s in parsed.synsets]

    out: dict[str, np.ndarray | str] = {
        "words": "\n".join(words),
        "forms": "\n".join(forms),
        "glosses": "\n".join(s[3] for s in parsed.synsets),
        "synset_pos": np.array([s[1] for s in parsed.synsets], dtype=np.uint8),
    }
    out["form_ptr"], out["form"] = _csr([sorted(form_targets[f]) for f in forms])
    out["sense_ptr"], out["sense"] = _csr(senses)
    out["member_ptr"], out["member"] = _csr(members)
    out["hypernym_ptr"], out["hypernym"] = _csr(hypernyms)
    out["similar_ptr"], out["similar"] = _csr(similar)
    for kind, pairs in parsed.sense_links.items():
        out[kind] = _sense_pairs(parsed, pairs, word_index, synset_index)
    return out


def _sense_pairs(parsed: Parsed, pairs, word_index, synset_index) -> np.ndarray:
    """Rows (word, synset, other word, other synset), both directions, sorted by the first word."""
    rows = set()
    for source, target in pairs:
        if target not in parsed.sense_synset:
            continue
        a = (word_index[parsed.sense_word[source]], synset_index[parsed.sense_synset[source]])
        b = (word_index[parsed.sense_word[target]], synset_index[parsed.sense_synset[target]])
        rows.add(a + b)
        rows.add(b + a)
    return np.array(sorted(rows), dtype=np.int32).reshape(-1, 4)


def morphy_rules() -> list[list[list[str]]]:
    """WordNet's detachment rules for regular inflections, per part of speech, as nltk has them;
    stored in the file so that reading the lexicon never imports nltk (1–2 s)."""
    # nltk's __init__ imports scipy where it is optional (~1.2 of nltk's ~1.7 CPU s); None in
    # sys.modules makes that import fail at once, as when scipy is not installed.
    blocked = "scipy" not in sys.modules
    if blocked:
        sys.modules["scipy"] = None  # type: ignore[assignment]
    try:
        from nltk.corpus.reader.wordnet import WordNetCorpusReader
    finally:
        if blocked:
            del sys.modules["scipy"]
    table = WordNetCorpusReader.MORPHOLOGICAL_SUBSTITUTIONS
    return [[list(rule) for rule in table[pos]] for pos in POS]


def encode(data: dict[str, np.ndarray | str]) -> bytes:
    header, chunks = {"format": FORMAT, "morphy": morphy_rules(), "arrays": []}, []
    for name, value in data.items():
        if isinstance(value, str):
            raw = value.encode("utf-8")
            header["arrays"].append({"name": name, "dtype": "str", "shape": [len(raw)]})
        else:
            value = np.ascontiguousarray(value, dtype=value.dtype.newbyteorder("<"))
            raw = value.tobytes()
            header["arrays"].append({"name": name, "dtype": value.dtype.str, "shape": list(value.shape)})
        chunks.append(raw)
    head = json.dumps(header, separators=(",", ":")).encode("utf-8") + b"\n"
    return gzip.compress(head + b"".join(chunks), compresslevel=9, mtime=0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--oewn", type=Path, default=DEFAULT_OEWN, help="the OEWN WN-LMF XML (.xml.gz)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the lexicon")
    parser.add_argument("--gloss-chars", type=int, default=90, help="cut glosses at a word boundary under this")
    args = parser.parse_args(argv)
    started = time.process_time()
    # Millions of small containers and no cycles: the collector's passes over the growing heap
    # cost ~2 of the run's ~10 CPU s and free nothing.
    gc.disable()
    data = arrays(parse(args.oewn, args.gloss_chars))
    blob = encode(data)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(blob)
    words = data["words"].count("\n") + 1
    print(
        f"{words:,} lemmas, {len(data['synset_pos']):,} synsets, {len(data['antonyms']):,} antonym and "
        f"{len(data['derivations']):,} derivation rows in {time.process_time() - started:.1f} CPU s; "
        f"wrote {args.out} ({len(blob):,} bytes)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
