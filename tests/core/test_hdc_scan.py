"""The HDC scan: chunked, threaded Hamming distances equal numpy's plain popcount of the XOR."""

from __future__ import annotations

import numpy as np
import pytest

from core import cancel
from core.retrieval import hdc_scan
from core.retrieval.hdc_vectors import WORDS


def _reference(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    return np.bitwise_count(matrix ^ vector).sum(axis=1)


@pytest.mark.parametrize("rows", [0, 1, 1023, 1024, 1025, 3 * 1024 + 7])
def test_distances_equal_the_plain_popcount_across_chunk_boundaries(rows: int) -> None:
    rng = np.random.default_rng(rows)
    matrix = rng.integers(0, 2**64, size=(rows, WORDS), dtype=np.uint64)
    vector = rng.integers(0, 2**64, size=WORDS, dtype=np.uint64)
    distances = hdc_scan.hamming(matrix, vector)
    assert distances.dtype == np.uint16
    assert np.array_equal(distances, _reference(matrix, vector))


def test_a_threaded_scan_equals_a_single_threaded_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hdc_scan, "_ROWS_PER_THREAD", 500)
    monkeypatch.setattr(hdc_scan, "_threads", lambda: 3)
    rng = np.random.default_rng(7)
    matrix = rng.integers(0, 2**64, size=(4001, WORDS), dtype=np.uint64)
    vector = matrix[17].copy()
    distances = hdc_scan.hamming(matrix, vector)
    assert distances[17] == 0
    assert np.array_equal(distances, _reference(matrix, vector))


def test_a_row_slice_of_a_larger_matrix_is_scanned_from_its_own_first_row() -> None:
    rng = np.random.default_rng(3)
    matrix = rng.integers(0, 2**64, size=(50, WORDS), dtype=np.uint64)
    vector = matrix[20].copy()
    assert np.array_equal(hdc_scan.hamming(matrix[10:30], vector), _reference(matrix[10:30], vector))


def test_a_cancelled_call_stops_a_threaded_scan_with_the_budget_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hdc_scan, "_ROWS_PER_THREAD", 1024)
    monkeypatch.setattr(hdc_scan, "_threads", lambda: 2)
    matrix = np.zeros((4096, WORDS), dtype=np.uint64)
    token = cancel.CancelToken(budget="pluginTimeoutMs")
    token.cancel("pluginTimeoutMs passed")
    with cancel.bound(token), pytest.raises(cancel.Cancelled, match="pluginTimeoutMs"):
        hdc_scan.hamming(matrix, matrix[0])
