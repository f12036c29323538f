"""Re-reading an edited Markdown file by its unit blocks: only the blocks whose text changed are
parsed, validated and tokenised again.

A Markdown unit block runs from one `## Context Unit` heading to the next, and the reader keeps no
state across such a heading (`unit_heading_starts`), so a block reads the same alone as in its file.
Each segment of a Markdown file keeps a block table (`blocks.npy`, under the segment's
checksums): per block its first line, a digest of its text, the row of its unit and the range
of its diagnostics. An edit reuses every block with the same text at the same line: its unit's
row of the previous segment (JSON bytes, token ids, columns, digests) and its diagnostics. A
block that moved unchanged (an edit above it added or removed lines) keeps its unit with the
location moved, unless it has diagnostics; any other block is read again with its true line
numbers, so units and diagnostics equal a read of the whole file (a test compares them edit by edit). Anything else
(another format, bad bytes, an unreadable file) is left to `Segment.build`, which reports it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.infra.diagnostics import Code, Diagnostic
from core.retrieval.bm25.fields import FIELDS, field_texts, field_tokens
from core.store.codec import FILE, LINE, PERM, SET, WIDTH, StoredUnits, UnitColumns
from core.store.segment import Segment, SegmentStems, TokenReuse, text_digest, unit_digest
from core.text.tokenizer import stem_table
from core.units import KnowledgeUnit

BLOCKS = "blocks"
# Columns of the block table: first line, unit row (-1: none), diagnostics start and end, and
# the block text's 16-byte digest as two int64.
_LINE, _ROW, _FIRST, _END = range(4)
_WIDTH = 6


@dataclass
class BlockTable:
    """A segment's unit blocks (see the module docstring), one row each, in file order."""

    rows: np.ndarray  # int64 [B, 6]
    vocab: dict[str, int] | None = None  # the segment's vocabulary as a dict, when a patch built one
    _index: dict[tuple[int, bytes], tuple[int, int, int]] | None = field(default=None, repr=False)
    _moved: dict[bytes, list[int]] | None = field(default=None, repr=False)

    def find(self, line: int, digest: bytes) -> tuple[int, int, int] | None:
        """The unit row and diagnostics range of the block with this first line and digest."""
        if self._index is None:
            blob = np.ascontiguousarray(self.rows[:, 4:]).tobytes()
            digests = (blob[at : at + 16] for at in range(0, len(blob), 16))
            values = self.rows[:, _ROW : _END + 1].tolist()
            self._index = {key: tuple(v) for key, v in zip(zip(self.rows[:, _LINE].tolist(), digests), values)}
        return self._index.get((line, digest))

    def moved(self, digest: bytes) -> tuple[int, int] | None:
        """(first line, unit row) of a block with this text at another line, when it has no
        diagnostics: they may quote line numbers ("already set on line 7"), so such a block is
        read again rather than shifted."""
        if self._moved is None:
            clean = self.rows[self.rows[:, _FIRST] == self.rows[:, _END]]
            blob = np.ascontiguousarray(clean[:, 4:]).tobytes()
            digests = (blob[at : at + 16] for at in range(0, len(blob), 16))
            self._moved = dict(zip(digests, clean[:, [_LINE, _ROW]].tolist()))
        found = self._moved.get(digest)
        return None if found is None else (found[0], found[1])

    @classmethod
    def load(cls, array: np.ndarray, segment: Segment) -> BlockTable | None:
        """A stored table, if it fits its segment (else the file is read whole, once)."""
        rows = np.asarray(array)
        if rows.ndim != 2 or rows.shape[1] != _WIDTH or rows.dtype != np.int64:
            return None
        units, problems = len(segment.units), len(segment.diagnostics)
        with_unit = rows[:, _ROW][rows[:, _ROW] >= 0]
        if (
            not np.array_equal(with_unit, np.arange(units))
            or (len(rows) and (rows[:, _FIRST].min() < 0 or rows[:, _END].max() > problems))
            or np.any(rows[:, _FIRST] > rows[:, _END])
        ):
            return None
        return cls(rows)


def block_table(content: bytes, file: str, segment: Segment) -> BlockTable | None:
    """The block table of a segment read whole from `content` (None when not unit Markdown): a
    block's unit is the one at its heading line, its diagnostics those at its lines."""
    found = _unit_blocks(content, file)
    if found is None or not found[1] and segment.diagnostics:
        return None
    text, starts, first_lines = found
    lines = np.array(first_lines, dtype=np.int64)
    unit_lines = np.asarray(segment.cols[:, LINE], dtype=np.int64)
    rows = np.full(len(starts), -1, dtype=np.int64)
    at = np.searchsorted(lines, unit_lines)
    if len(unit_lines) and (at.max() >= len(lines) or not np.array_equal(lines[at], unit_lines)):
        return None
    rows[at] = np.arange(len(unit_lines))
    problem_lines = np.array([d.line for d in segment.diagnostics], dtype=np.int64)
    if np.any(np.diff(problem_lines) < 0) or (
        len(problem_lines) and problem_lines[0] < (lines[0] if len(lines) else 1)
    ):
        return None  # not all in block order: read whole next time
    bounds = np.searchsorted(problem_lines, lines)
    ends = np.append(bounds[1:], len(problem_lines))[: len(bounds)]
    head = np.column_stack([lines, rows, bounds, ends])
    return BlockTable(_table(head, _block_digests(text, starts)))


def _table(head: np.ndarray, digests: list[bytes]) -> np.ndarray:
    """The stored table: per block first line, unit row, diagnostics start and end, then digest."""
    table = np.zeros((len(digests), _WIDTH), dtype=np.int64)
    table[:, :4] = np.asarray(head, dtype=np.int64).reshape(-1, 4)
    if digests:
        table[:, 4:] = np.frombuffer(b"".join(digests), dtype=np.int64).reshape(-1, 2)
    return table


def _digest(text: str) -> bytes:
    return _digest_of(text.encode("utf-8", "surrogatepass"))


def _digest_of(data: bytes | memoryview) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def _block_digests(text: str, starts: list[int]) -> list[bytes]:
    """`_digest` of each block of `text` (starting at `starts`): of an ASCII text (a character
    is a byte) from slices of its one encoding, without a string and an encoding per block."""
    bounds = zip(starts, [*starts[1:], len(text)])
    if text.isascii():
        view = memoryview(text.encode("ascii"))
        return [_digest_of(view[start:end]) for start, end in bounds]
    return [_digest(text[start:end]) for start, end in bounds]


def _first_lines(text: str, starts: list[int]) -> list[int]:
    """The line number of each offset in `starts` (ascending)."""
    lines, line, counted = [], 1, 0
    for start in starts:
        line += text.count("\n", counted, start)
        counted = start
        lines.append(line)
    return lines


def _blocks_of(content: bytes | None, file: str) -> list[tuple[int, str]] | None:
    """(first line, text) of the file's unit blocks in file order (read from disk when `content`
    is None; text before the first heading is in none), or None when the block reader does not
    take it: not unit Markdown, or characters `read_text` would replace."""
    found = _unit_blocks(content, file)
    if found is None:
        return None
    text, starts, lines = found
    return list(zip(lines, (text[start:end] for start, end in zip(starts, [*starts[1:], len(text)]))))


def _unit_blocks(content: bytes | None, file: str) -> tuple[str, list[int], list[int]] | None:
    """`_blocks_of` as the file's text, where each block starts and its first line."""
    # The readers load when a file is read again, not with the store: a warm `ask` reads none.
    from core.cnl.markdown import preamble_speaks, unit_heading_starts
    from core.cnl.source import (
        MAX_FILE_BYTES,
        Format,
        decode,
        detect_format,
        first_bad_character,
        load_text,
        normalise_newlines,
    )

    if Path(file).suffix.lower() != ".md":  # only `.md` is read as unit Markdown: decode nothing
        return None
    text = load_text(Path(file), MAX_FILE_BYTES) if content is None else decode(content, file)
    if isinstance(text, Diagnostic):
        return None
    text = normalise_newlines(text)
    if detect_format(text, file) is not Format.MARKDOWN or first_bad_character(text) is not None:
        return None
    starts = unit_heading_starts(text)
    lines = _first_lines(text, starts)
    # Text before the first unit is in no block; when the reader has something to say about it
    # (a permission-like line withdraws the whole file) the file is read whole.
    preamble = text[: starts[0]].removesuffix("\n") if starts else text
    if preamble_speaks(preamble):
        return None
    return text, starts, lines


def patched(
    file: str, key: str, earlier: Segment, known: BlockTable | None, content: bytes | None = None
) -> tuple[Segment, BlockTable] | None:
    """`earlier`'s file read again from `content` (or from disk), reusing the blocks `known`
    holds (every block is read when it is None); None when the file is not (or no longer)
    plain unit Markdown, for `Segment.build` to read."""
    from core.cnl.markdown import read_markdown

    blocks = _blocks_of(content, file)
    if blocks is None:
        return None
    plan = _Plan(earlier, known.vocab if known is not None else None)
    for line, block in blocks:
        digest = _digest(block)
        found = known.find(line, digest) if known is not None else None
        moved = known.moved(digest) if known is not None and found is None else None
        if found is not None:
            plan.add_kept(line, digest, *found)
        elif moved is not None:
            plan.add_kept(line, digest, moved[1], 0, 0, shift=line - moved[0])
        else:
            units, diagnostics = read_markdown(block, file, first_line=line)
            plan.add_fresh(line, digest, units, diagnostics)
    if any(d.code is Code.PERMISSION_OUTSIDE_UNIT for d in plan.diagnostics):
        return None  # it withdraws the unit of the next block too: read the file whole
    segment = plan.segment(file, key)
    return segment, BlockTable(_table(np.array(plan.blocks), plan.digests), plan.vocab)


_LOCATION = b'"location":{"file":'
_LINE_KEY = b',"line":'


def _moved_json(json: bytes, shift: int) -> bytes:
    """A stored unit's JSON with its location's line moved by `shift`: what dumping the unit read
    at its new line gives. A JSON string holds no bare `"`, so `,"line":` after the location's
    file can only be the location's own key."""
    at = json.index(_LINE_KEY, json.index(_LOCATION)) + len(_LINE_KEY)
    end = json.index(b",", at)
    return json[:at] + str(int(json[at:end]) + shift).encode() + json[end:]


class _Plan:
    """The new segment's rows in order, each a row of `earlier` (r ≥ 0) or a fresh unit (-1-k)."""

    def __init__(self, earlier: Segment, vocab: dict[str, int] | None):
        self.earlier = earlier
        self.vocab = vocab
        self.sources: list[int] = []
        self.shifts: list[int] = []  # lines a kept unit moved by
        self.fresh: list[KnowledgeUnit] = []
        self.diagnostics: list[Diagnostic] = []
        self.blocks: list[tuple[int, int, int, int]] = []
        self.digests: list[bytes] = []

    def add_kept(self, line: int, digest: bytes, row: int, start: int, end: int, shift: int = 0) -> None:
        new_row = len(self.sources) if row >= 0 else -1
        if row >= 0:
            self.sources.append(row)
            self.shifts.append(shift)
        self._note(line, digest, new_row, self.earlier.diagnostics[start:end])

    def add_fresh(self, line: int, digest: bytes, units: list[KnowledgeUnit], diagnostics: list[Diagnostic]) -> None:
        # A block holds at most one unit: its heading opens it, the next heading ends the block.
        new_row = len(self.sources) if units else -1
        for unit in units:
            self.sources.append(-1 - len(self.fresh))
            self.shifts.append(0)
            self.fresh.append(unit)
        self._note(line, digest, new_row, diagnostics)

    def _note(self, line: int, digest: bytes, row: int, diagnostics: Sequence[Diagnostic]) -> None:
        start = len(self.diagnostics)
        self.diagnostics.extend(diagnostics)
        self.blocks.append((line, row, start, len(self.diagnostics)))
        self.digests.append(digest)

    def segment(self, file: str, key: str) -> Segment:
        earlier, fresh = self.earlier, self.fresh
        sources = np.array(self.sources, dtype=np.int64)
        kept = sources >= 0
        old = np.where(kept, sources, 0)
        new = np.where(kept, 0, -1 - sources)
        texts = [field_texts(unit) for unit in fresh]
        text_digests = _rows(
            np.asarray(earlier.texts),
            old,
            np.frombuffer(b"".join(map(text_digest, texts)), np.uint8).reshape(len(fresh), 8),
            new,
            kept,
        )
        blobs = [unit.model_dump_json().encode() for unit in fresh]
        fresh_digests = np.frombuffer(b"".join(map(unit_digest, fresh)), np.uint8).reshape(len(fresh), 16)
        digests = _rows(np.asarray(earlier.digests), old, fresh_digests, new, kept)
        self.vocab, terms, lengths = _tokens(earlier, self.vocab, fresh, text_digests[~kept], sources, kept)
        columns = _columns(earlier.columns, UnitColumns.of(fresh), sources, kept)
        shifts = np.array(self.shifts, dtype=np.int64)
        columns.cols[:, LINE] += shifts.astype(np.int32)
        units, moved = _units(earlier, sources, shifts, fresh, blobs, columns.cols[:, SET])
        for position, json in moved.items():
            # A moved unit's JSON changed in its line only; `unit_digest` hashes that JSON.
            digests[position] = np.frombuffer(hashlib.blake2b(json, digest_size=16).digest(), np.uint8)
        return Segment(
            file=file,
            key=key,
            units=units,
            diagnostics=tuple(self.diagnostics),
            words=tuple(self.vocab if self.vocab is not None else earlier.words),
            terms=terms,
            lengths=lengths,
            stems=_stems(earlier.stems, texts),
            digests=digests,
            columns=columns,
            texts=text_digests,
            offsets=units.dump()[1],
        )


def _rows(earlier: np.ndarray, old: np.ndarray, fresh: np.ndarray, new: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """Per-row array of the new segment: `earlier`'s rows where kept, else the fresh rows."""
    out = np.empty((len(kept), *earlier.shape[1:]), dtype=earlier.dtype)
    out[kept] = earlier[old[kept]]
    out[~kept] = fresh[new[~kept]]
    return out


def _tokens(
    earlier: Segment,
    vocab: dict[str, int] | None,
    fresh: list[KnowledgeUnit],
    fresh_texts: np.ndarray,
    sources: np.ndarray,
    kept: np.ndarray,
) -> tuple[dict[str, int] | None, np.ndarray, np.ndarray]:
    """Vocabulary (None: `earlier`'s words unchanged), term ids and lengths: kept rows keep their
    ids; fresh units reuse the ids of an earlier unit with the same tokenised text or are
    tokenised, new words appended (as `Segment.build` does with an earlier segment)."""
    reuse = TokenReuse(earlier) if fresh else None
    grown = None
    pieces, lengths = [], np.zeros((len(fresh), len(FIELDS)), dtype=np.int32)
    for k, unit in enumerate(fresh):
        assert reuse is not None  # made above whenever there is a fresh unit
        found = reuse.tokens(fresh_texts[k].tobytes())
        if found is not None:
            pieces.append(np.asarray(found[0], dtype=np.int32))
            lengths[k] = found[1]
            continue
        if grown is None:
            # Earlier's dict is copied, never grown: another reload may still patch from it.
            grown = dict(vocab) if vocab is not None else {word: i for i, word in enumerate(earlier.words)}
        fields = field_tokens(unit)
        lengths[k] = [len(tokens) for tokens in fields]
        pieces.append(np.array([grown.setdefault(t, len(grown)) for tokens in fields for t in tokens], dtype=np.int32))
    old_terms, old_lengths = np.asarray(earlier.terms), np.asarray(earlier.lengths)
    source_terms = np.concatenate([old_terms, *pieces]) if pieces else old_terms
    old_totals = old_lengths.sum(axis=1, dtype=np.int64)
    fresh_totals = lengths.sum(axis=1, dtype=np.int64)
    row_lengths = np.empty((len(sources), len(FIELDS)), dtype=np.int32)
    row_lengths[kept] = old_lengths[sources[kept]]
    row_lengths[~kept] = lengths[-1 - sources[~kept]]
    starts = np.empty(len(sources), dtype=np.int64)
    starts[kept] = (np.cumsum(old_totals) - old_totals)[sources[kept]]
    starts[~kept] = (len(old_terms) + np.cumsum(fresh_totals) - fresh_totals)[-1 - sources[~kept]]
    totals = row_lengths.sum(axis=1, dtype=np.int64)
    offsets = np.repeat(starts - (np.cumsum(totals) - totals), totals) + np.arange(int(totals.sum()))
    return grown if grown is not None else vocab, source_terms[offsets].astype(np.int32, copy=False), row_lengths


def _stems(earlier: SegmentStems, texts: list[tuple[str, ...]]) -> SegmentStems:
    """The earlier stem table, with the fresh units' words added when any is new to it."""
    fresh = stem_table(part for fields in texts for part in fields)
    if all(earlier.lookup(word) == stem for word, stem in fresh.items()):
        return earlier
    return SegmentStems.of({**earlier.table(), **fresh})


def _units(
    earlier: Segment,
    sources: np.ndarray,
    shifts: np.ndarray,
    fresh: list[KnowledgeUnit],
    blobs: list[bytes],
    masks: np.ndarray,
) -> tuple[StoredUnits, dict[int, bytes]]:
    """The new segment's units as stored JSON (each run of rows kept in place copies its bytes
    at once), the fresh ones kept as read so that nothing needs restoring; and the JSON of each
    kept unit that moved, by position."""
    stored = earlier.units if isinstance(earlier.units, StoredUnits) else None

    def json_of(row: int) -> bytes:
        return stored.json_of(row, row + 1) if stored is not None else earlier.units[row].model_dump_json().encode()

    moved = {
        position: _moved_json(json_of(int(sources[position])), int(shifts[position]))
        for position in np.flatnonzero(shifts).tolist()
    }
    # A run is consecutive earlier rows in place; every fresh or moved row is a run of its own.
    alone = (sources < 0) | (shifts != 0)
    breaks = (sources[1:] != sources[:-1] + 1) | alone[1:] | alone[:-1]
    pieces = []
    for run, start in zip(np.split(sources, np.flatnonzero(breaks) + 1), [0, *(np.flatnonzero(breaks) + 1).tolist()]):
        if not len(run):
            continue
        first = int(run[0])
        if first < 0:
            pieces.append(blobs[-1 - first])
        elif start in moved:
            pieces.append(moved[start])
        elif stored is not None:
            pieces.append(stored.json_of(first, int(run[-1]) + 1))
        else:
            pieces.extend(json_of(row) for row in run.tolist())
    blob = b"".join(pieces)
    sizes = np.zeros(len(sources), dtype=np.int64)
    in_place = (sources >= 0) & (shifts == 0)
    if stored is not None:
        sizes[in_place] = np.diff(stored.offsets)[sources[in_place]]
    else:
        sizes[in_place] = [len(json_of(row)) for row in sources[in_place].tolist()]
    sizes[sources < 0] = [len(blobs[-1 - row]) for row in sources[sources < 0].tolist()]
    for position, json in moved.items():
        sizes[position] = len(json)
    offsets = np.zeros(len(sources) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    units = StoredUnits(blob, offsets, masks)
    for position in np.flatnonzero(sources < 0).tolist():
        units.seed(position, fresh[-1 - int(sources[position])])
    return units, moved


def _columns(earlier: UnitColumns, fresh: UnitColumns, sources: np.ndarray, kept: np.ndarray) -> UnitColumns:
    """Kept rows' columns with the fresh units' rows spliced in, the two permission and file
    tables joined (a class no unit uses any more is harmless: the mask is per row)."""
    perms = {perm: i for i, perm in enumerate(earlier.perms)}
    files = {name: i for i, name in enumerate(earlier.files)}
    cols = np.empty((len(sources), WIDTH), dtype=np.int32)
    cols[kept] = earlier.cols[sources[kept]]
    add = fresh.cols[-1 - sources[~kept]].copy()
    perm_map = np.array([perms.setdefault(p, len(perms)) for p in fresh.perms] + [-1], dtype=np.int32)
    file_map = np.array([files.setdefault(f, len(files)) for f in fresh.files] + [-1], dtype=np.int32)
    add[:, PERM], add[:, FILE] = perm_map[add[:, PERM]], file_map[add[:, FILE]]
    cols[~kept] = add
    ids = [earlier.ids[row] if row >= 0 else fresh.ids[-1 - row] for row in sources.tolist()]
    return UnitColumns(ids, list(perms), list(files), cols)
