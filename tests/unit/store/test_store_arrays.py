"""core/store/arrays.py: files written with their CRC-32 taken from memory read back as written,
and the CRC a reader computes from the file is the one the writer recorded."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.store.arrays import crc32_of, read_arrays, save_npy, write_arrays, write_blob
from tests.support.fuzz_settings import bounded

ARRAYS = {
    "ints": np.arange(10, dtype=np.int64),
    "empty": np.zeros((0, 7), dtype=np.int32),
    "fortran": np.arange(12, dtype=np.int16).reshape(3, 4).T,
    "strided": np.arange(24, dtype=np.uint64).reshape(4, 6)[:, ::2],
    "floats": np.linspace(0, 1, 9).reshape(3, 3),
}


@pytest.mark.parametrize("name", list(ARRAYS))
def test_a_saved_array_loads_back_equal_and_its_crc_is_the_files(tmp_path: Path, name: str):
    array = ARRAYS[name]
    crc = save_npy(tmp_path / "a.npy", array)
    loaded = np.load(tmp_path / "a.npy")
    assert loaded.dtype == array.dtype and loaded.shape == array.shape
    np.testing.assert_array_equal(loaded, array)
    assert crc == crc32_of(tmp_path / "a.npy")


def test_a_blobs_crc_is_the_files(tmp_path: Path):
    assert write_blob(tmp_path / "b.json", b'{"a": 1}') == crc32_of(tmp_path / "b.json")


def test_an_index_folder_round_trips_and_a_flipped_byte_is_refused(tmp_path: Path):
    folder = tmp_path / "view.idx"
    write_arrays(folder, {"words.json": b'["a", "b"]'}, ARRAYS)
    texts, arrays = read_arrays(folder)
    assert texts == {"words.json": b'["a", "b"]'}
    for name, array in ARRAYS.items():
        np.testing.assert_array_equal(arrays[name], array)
    data = bytearray((folder / "floats.npy").read_bytes())
    data[-3] ^= 0x01
    (folder / "floats.npy").write_bytes(bytes(data))
    with pytest.raises(ValueError, match="floats.npy does not match its checksum"):
        read_arrays(folder)


@bounded(200)
@given(
    st.sampled_from(["<i4", "<i8", "<u8", "|u1", "<f4", ">f8", "|b1", "<U3", "<i2"]),
    st.lists(st.integers(0, 4), max_size=3),
    st.booleans(),
)
def test_npy_array_reads_every_header_as_numpys_own_parser_does(descr, shape, fortran):
    import io

    from core.store.mapped import npy_array

    array = np.zeros(shape, dtype=descr)
    array = np.asfortranarray(array) if fortran else array
    buffer = io.BytesIO()
    np.save(buffer, array)
    data = buffer.getvalue()
    if array.flags.f_contiguous and not array.flags.c_contiguous:  # numpy writes it in Fortran order
        with pytest.raises(ValueError):
            npy_array(data)
        return
    read = npy_array(data)
    want = np.load(io.BytesIO(data))
    assert read.shape == want.shape and read.dtype == want.dtype and np.array_equal(read, want)
    with pytest.raises(ValueError):
        npy_array(data[:-1] if read.nbytes else data[:20])


@pytest.mark.parametrize("flip", [None, 0, 3 * 4096 + 5, -1])
def test_a_mapped_file_checked_chunk_by_chunk_is_refused_wherever_a_byte_flips(tmp_path: Path, monkeypatch, flip):
    # A large array's CRC is taken a chunk at a time, each chunk's pages released after it
    # (core/store/mapped.py: `crc32_released`): every chunk counts, the last short one too.
    from core.store import mapped

    monkeypatch.setattr(mapped, "SMALL_BYTES", 0)
    monkeypatch.setattr(mapped, "_CHECK_CHUNK", 2 * 4096)
    big = {"keys": np.arange(5 * 4096 + 77, dtype=np.int64)}
    folder = tmp_path / "view.idx"
    write_arrays(folder, {}, big)
    if flip is None:
        np.testing.assert_array_equal(read_arrays(folder)[1]["keys"], big["keys"])
        return
    data = bytearray((folder / "keys.npy").read_bytes())
    data[flip] ^= 0x10
    (folder / "keys.npy").write_bytes(bytes(data))
    with pytest.raises(ValueError, match="keys.npy does not match its checksum"):
        read_arrays(folder)
