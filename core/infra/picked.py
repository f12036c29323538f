"""Some items of a sequence by position, read through rather than copied out."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

import numpy as np

T = TypeVar("T")


class Picked(Sequence[T]):
    """`items[p]` for each position p of `positions` (a list or an integer array), on access: a
    lazily restored sequence stays lazy, and a million positions cost no copies of the items."""

    def __init__(self, items: Sequence[T], positions: Sequence[int] | np.ndarray):
        self._items = items
        self._positions = positions

    def __len__(self) -> int:
        return len(self._positions)

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [self._items[int(p)] for p in self._positions[index]]
        return self._items[int(self._positions[index])]

    def __iter__(self) -> Iterator[T]:
        positions = self._positions.tolist() if isinstance(self._positions, np.ndarray) else self._positions
        return map(self._items.__getitem__, positions)
