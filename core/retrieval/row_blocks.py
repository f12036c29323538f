"""Several row matrices read as one, without copying them.

A view's HDC vectors live in the index store as one vector set per KB file, memory-mapped
(core/store/vectors.py). Concatenating them into one matrix copied every vector once more: about
1.1 GB of fresh memory at a million units, and seconds of page faults before the first HDC
scan. `RowBlocks` keeps the per-file matrices (or the rows of them a view keeps) and answers the
few reads the HDC index makes: its length, one row, a run of rows, and its blocks for a scan
(core/retrieval/hdc/scan.py scans block by block into one result).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class RowBlocks:
    """The rows of `blocks` ([n_i, width] arrays, in order) as one [sum n_i, width] matrix."""

    def __init__(self, blocks: Sequence[np.ndarray], width: int):
        self.blocks = tuple(block for block in blocks if len(block))
        self.width = width
        self.starts = np.concatenate(([0], np.cumsum([len(block) for block in self.blocks], dtype=np.int64)))

    def __len__(self) -> int:
        return int(self.starts[-1])

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        """All rows as one matrix (a copy: for tests and small views, not the scan)."""
        whole = self._rows(0, len(self))
        return whole if dtype is None else whole.astype(dtype)

    def __getitem__(self, key: int | slice) -> np.ndarray:
        """One row (an int), or a copy of a run of rows (a slice with step 1)."""
        if isinstance(key, slice):
            start, stop, step = key.indices(len(self))
            if step != 1:
                raise ValueError("RowBlocks slices take every row")
            return self._rows(start, stop)
        index = int(key)
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"row {key} of {len(self)}")
        block = int(np.searchsorted(self.starts, index, side="right")) - 1
        return self.blocks[block][index - int(self.starts[block])]

    def _rows(self, start: int, stop: int) -> np.ndarray:
        if stop <= start:
            return np.empty((0, self.width), dtype=self.blocks[0].dtype if self.blocks else np.uint64)
        first = int(np.searchsorted(self.starts, start, side="right")) - 1
        pieces = []
        for block in range(first, len(self.blocks)):
            offset = int(self.starts[block])
            if offset >= stop:
                break
            pieces.append(self.blocks[block][max(start - offset, 0) : stop - offset])
        return np.concatenate(pieces)
