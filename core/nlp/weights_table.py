"""The tagger's weights as one flat table read in place: a feature is looked up when first seen.

An `mrptui ask` tags a few dozen words, which look up a few hundred of the 62k features; parsing
all of them (JSON, or `marshal` of the parsed dicts) cost ~0.03-0.04 CPU s per process. The
table is the same weights laid out as arrays in one `bytes` (native byte order: it lives only in
this machine's index cache, core/nlp/unpacked.py), opened without parsing them:

    header line (JSON: format, classes, tagdict, slot and feature counts)
    slots      uint32[S]   open addressing on the CRC-32 of the feature's UTF-8, 0 = empty,
                           else the feature's number + 1; S is a power of two ≥ 2 × features
    name_ends  uint32[F+1] feature f's UTF-8 name is names[name_ends[f]:name_ends[f + 1]]
    pair_ends  uint32[F+1] its (class, weight) pairs are pairs[pair_ends[f]:pair_ends[f + 1]]
    classes    uint8[P]    index into the sorted class names
    weights    float64[P]  the weight as parsed from the JSON, bit for bit
    names      UTF-8

Each array starts at a multiple of 8 bytes. A feature's pairs keep the JSON's order, and each
class appears once per feature, so scores sum exactly as from the parsed dicts.
"""

from __future__ import annotations

import json
import zlib
from array import array
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np

FORMAT = "mrptui-upos-table/1"


class WeightsTable:
    """`find(feature)`: the feature's number (None for an unseen one), whose weights `fill` writes
    into a dense row of one weight per class."""

    def __init__(self, raw: bytes) -> None:
        newline = raw.index(b"\n")
        header = json.loads(raw[:newline])
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise ValueError(f"not a {FORMAT} table")
        self.classes: tuple[str, ...] = tuple(header["classes"])
        self.tagdict: dict[str, str] = header["tagdict"]
        slots, features, pairs = header["slots"], header["features"], header["pairs"]
        view, at = memoryview(raw), _aligned(newline + 1)
        sections: list[memoryview[Any]] = []  # "I" and "B" sections hold ints, the "d" one floats
        code: Literal["I", "B", "d"]
        for code, count in (("I", slots), ("I", features + 1), ("I", features + 1), ("B", pairs), ("d", pairs)):
            size = count * array(code).itemsize
            if at + size > len(raw):
                raise ValueError(f"a truncated {FORMAT} table")
            sections.append(view[at : at + size].cast(code))
            at = _aligned(at + size)
        self._slots, self._name_ends, self._pair_ends, self._classes, self._weights = sections
        self._names = view[at : at + self._name_ends[features]]
        if len(self._slots) != slots or len(self._names) != self._name_ends[features] or slots & (slots - 1):
            raise ValueError(f"a truncated {FORMAT} table")
        self._mask = slots - 1
        self._raw = raw
        self.features: int = features

    @property
    def raw(self) -> bytes:
        """The table's bytes, as `table_bytes` made them."""
        return self._raw

    def find(self, feature: str) -> int | None:
        key = feature.encode("utf-8")
        slot = zlib.crc32(key) & self._mask
        while entry := self._slots[slot]:
            f = entry - 1
            if self._names[self._name_ends[f] : self._name_ends[f + 1]] == key:
                return f
            slot = (slot + 1) & self._mask
        return None

    def fill(self, f: int, row: np.ndarray) -> None:
        """Write feature `f`'s weights into `row` (one float64 per class; its other classes are
        left as they are), bit for bit."""
        low, high = self._pair_ends[f], self._pair_ends[f + 1]
        classes = np.frombuffer(self._classes[low:high], dtype=np.uint8)
        row[classes] = np.frombuffer(self._weights[low:high], dtype=np.float64)


def table_bytes(
    weights: Mapping[str, Mapping[str, float]], tagdict: Mapping[str, str], classes: Sequence[str]
) -> bytes:
    """The table of the weights as scripts/train_tagger.py writes them (feature → class → weight)."""
    names = sorted(classes)
    index = {name: i for i, name in enumerate(names)}
    slots = 1 << max(1, (2 * len(weights) - 1).bit_length())
    table, name_ends, pair_ends = array("I", bytes(4 * slots)), array("I", [0]), array("I", [0])
    pair_classes, pair_weights, blob = array("B"), array("d"), bytearray()
    for number, (feature, by_class) in enumerate(weights.items()):
        key = feature.encode("utf-8")
        slot = zlib.crc32(key) & (slots - 1)
        while table[slot]:
            slot = (slot + 1) & (slots - 1)
        table[slot] = number + 1
        blob += key
        name_ends.append(len(blob))
        for name, weight in by_class.items():
            pair_classes.append(index[name])
            pair_weights.append(weight)
        pair_ends.append(len(pair_classes))
    header = {
        "format": FORMAT,
        "classes": names,
        "tagdict": dict(tagdict),
        "slots": slots,
        "features": len(weights),
        "pairs": len(pair_classes),
    }
    out = bytearray(json.dumps(header).encode() + b"\n")
    for section in (table, name_ends, pair_ends, pair_classes, pair_weights, blob):
        out += bytes(_aligned(len(out)) - len(out))
        out += section if isinstance(section, bytearray) else section.tobytes()
    return bytes(out)


def _aligned(offset: int) -> int:
    return (offset + 7) & ~7
