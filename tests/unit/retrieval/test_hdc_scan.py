"""The HDC scan: chunked, threaded Hamming distances equal numpy's plain popcount of the XOR, on
numpy's path and on the compiled kernel's (numba, which `make test` installs with the bench extra)."""

from __future__ import annotations

import gc

import numpy as np
import pytest

from core.infra import cancel, collector
from core.retrieval.hdc import scan as hdc_scan
from core.retrieval.hdc.vectors import WORDS
from core.retrieval.kernel_gate import KernelGate
from core.retrieval.row_blocks import RowBlocks


class _Gate:
    def __init__(self, kernel):
        self.kernel = kernel

    def kernel_for(self, rows: int):
        return self.kernel


@pytest.fixture(params=["numpy", "compiled"], autouse=True)
def path(request, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "compiled":
        from core.retrieval.hdc import kernel as hdc_kernel

        monkeypatch.setattr(hdc_scan, "_KERNEL", _Gate(hdc_kernel.distances))
        monkeypatch.setattr(hdc_scan, "_KERNEL_ROWS", 1000)  # several calls per block and thread
    else:
        monkeypatch.setattr(hdc_scan, "_KERNEL", _Gate(None))
    return request.param


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


def test_blocks_of_rows_scan_as_one_matrix() -> None:
    rng = np.random.default_rng(11)
    matrix = rng.integers(0, 2**64, size=(2500, WORDS), dtype=np.uint64)
    vector = matrix[1300].copy()
    blocks = RowBlocks([matrix[:700], matrix[700:701], matrix[701:]], WORDS)
    assert np.array_equal(hdc_scan.hamming(blocks, vector), _reference(matrix, vector))


def test_a_big_scan_loads_the_compiled_kernel_in_the_background_and_small_ones_never_do() -> None:
    gate = KernelGate("core.retrieval.hdc.kernel", "distances", 1000, name="test-load")
    assert gate.kernel_for(999) is None and not gate.wait_until_loaded(0)
    assert gate.kernel_for(1000) is None  # the call that starts the load is served by numpy
    assert gate.wait_until_loaded(120)
    from core.retrieval.hdc import kernel as hdc_kernel

    assert gate.kernel_for(1) is hdc_kernel.distances


def test_a_loaded_kernel_leaves_what_it_imported_out_of_the_collectors_generations() -> None:
    """numba's ~100k module objects live as long as the process: each full collection walked
    them all while questions ran (core/infra/collector.py `keep_out_of_collections`)."""
    collector.back_into_collections()
    try:
        gate = KernelGate("core.retrieval.hdc.kernel", "distances", 1, name="test-freeze")
        gate.kernel_for(1)
        assert gate.wait_until_loaded(120)
        kernel = gate.kernel_for(1)
        assert gc.get_freeze_count() > 0
        assert not any(o is kernel for o in gc.get_objects())
    finally:
        collector.back_into_collections()
