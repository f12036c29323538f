"""RowBlocks (several row matrices read as one) and the HDC scan over them."""

from __future__ import annotations

import numpy as np
import pytest

from core.retrieval.hdc import scan as hdc_scan
from core.retrieval.hdc.scan import hamming
from core.retrieval.hdc.vectors import WORDS
from core.retrieval.row_blocks import RowBlocks


def _matrix(rows: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2**63, size=(rows, WORDS), dtype=np.uint64)


SIZES = [3, 0, 1, 5, 2]


@pytest.fixture
def parts() -> list[np.ndarray]:
    return [_matrix(size, seed) for seed, size in enumerate(SIZES)]


def test_rows_and_runs_of_rows_read_as_from_one_matrix(parts) -> None:
    blocks, whole = RowBlocks(parts, WORDS), np.concatenate(parts)
    assert len(blocks) == len(whole) == 11 and len(blocks.blocks) == 4  # the empty block is dropped
    for row in range(-len(whole), len(whole)):
        np.testing.assert_array_equal(blocks[row], whole[row])
    for start in range(len(whole) + 1):
        for stop in range(start, len(whole) + 2):
            np.testing.assert_array_equal(blocks[start:stop], whole[start:stop])
    np.testing.assert_array_equal(np.asarray(blocks), whole)
    with pytest.raises(IndexError):
        blocks[len(whole)]
    with pytest.raises(ValueError):
        blocks[::2]


def test_a_row_is_read_from_its_block_not_copied(parts) -> None:
    blocks = RowBlocks(parts, WORDS)
    assert np.shares_memory(blocks[3], parts[2]) and np.shares_memory(blocks[-1], parts[4])


@pytest.mark.parametrize("threads", [1, 3])
def test_the_scan_of_blocks_equals_the_scan_of_their_concatenation(parts, monkeypatch, threads) -> None:
    # Small chunks and a low threshold, so chunks and thread ranges both cut across blocks.
    monkeypatch.setattr(hdc_scan, "_CHUNK_ROWS", 2)
    monkeypatch.setattr(hdc_scan, "_ROWS_PER_THREAD", 1)
    monkeypatch.setattr(hdc_scan, "_threads", lambda: threads)
    vector = _matrix(1, 99)[0]
    blocks = RowBlocks(parts, WORDS)
    expected = np.array([int(np.bitwise_count(row ^ vector).sum()) for row in np.concatenate(parts)])
    np.testing.assert_array_equal(hamming(blocks, vector), expected)
    np.testing.assert_array_equal(hamming(np.concatenate(parts), vector), expected)
    assert len(hamming(RowBlocks([], WORDS), vector)) == 0
