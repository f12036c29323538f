"""The set helpers the closure's hot path uses in place of np.unique give np.unique's answers."""

from __future__ import annotations

import numpy as np
import pytest

from core.retrieval.thinkingdb.arrays import counted, distinct, unique_in_order


def _cases() -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    return [rng.integers(0, high, size, dtype=np.int64) for size in (0, 1, 2, 9, 400) for high in (1, 3, 10**6)]


@pytest.mark.parametrize("values", _cases(), ids=lambda v: f"n{len(v)}-max{v.max() if len(v) else 0}")
def test_helpers_agree_with_np_unique(values: np.ndarray) -> None:
    symbols, counts = counted(values)
    expected_symbols, expected_counts = np.unique(values, return_counts=True)
    assert symbols.tolist() == expected_symbols.tolist()
    assert counts.tolist() == expected_counts.tolist()
    assert distinct(values).tolist() == expected_symbols.tolist()
    assert distinct(values).dtype == values.dtype
    _, first = np.unique(values, return_index=True)
    assert unique_in_order(values).tolist() == values[np.sort(first)].tolist()


def test_unique_in_order_keeps_first_occurrences_in_input_order() -> None:
    assert unique_in_order(np.array([5, 3, 5, 1, 3, 9], dtype=np.int64)).tolist() == [5, 3, 1, 9]
