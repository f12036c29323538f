"""A stored index as a folder of `.npy` arrays, memory-mapped on read.

A merged BM25 index is ~12 bytes per posting (1 GB at 1M units): reading it through a zip file
and hashing it with SHA-256 cost more than the rest of opening. Here each array is its own
`.npy` file, checked against a CRC-32 in `meta.json` (written last) and memory-mapped when large
(core/store/mapped.py), so a query pages in only the postings it reads. The folder
is written under a temp name and renamed into place, so a reader sees a whole index or none.
A writer takes each file's CRC-32 from the bytes it writes: reading back what it had just
written cost ~1 s per GB here.
"""

from __future__ import annotations

import io
import json
import shutil
import zlib
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.store.atomic import publish_dir, temp_dir
from core.store.mapped import crc32_released, read_array, read_checked
from core.store.private import Mac, open_private, write_private

INDEX_SUFFIX = ".idx"
# 2: the vocabulary is `words.json`, one word a line (core/retrieval/bm25/words.py), looked up in
# place; format 1's `names.json` is read by no one (its folder is rebuilt).
_FORMAT = 2
_CHUNK = 8 << 20


@dataclass(frozen=True)
class Streamed:
    """Arrays written as their blocks come, so none is ever whole in memory: each one's type and
    length (known before the first block: they are its `.npy` header), then `blocks`, each the
    next run of every array. `order` names every array of the folder, the given ones included,
    in the order `meta.json` lists them."""

    types: dict[str, np.dtype]
    lengths: dict[str, int]
    blocks: Iterable[dict[str, np.ndarray]]
    order: tuple[str, ...]


def write_arrays(
    path: Path,
    texts: dict[str, bytes],
    arrays: dict[str, np.ndarray],
    scratch: Path | None = None,
    streamed: Streamed | None = None,
) -> None:
    """Publish `texts` (file name -> bytes), `arrays` and the `streamed` arrays as the folder
    `path`, written first in `scratch` (default: beside it; the store's temp folder, swept at
    open); a folder already there is kept."""
    temp = temp_dir(scratch or path.parent, path.name)
    try:
        crcs = {name: write_blob(temp / name, text) for name, text in texts.items()}
        crcs.update({f"{name}.npy": save_npy(temp / f"{name}.npy", array) for name, array in arrays.items()})
        names = list(arrays)
        if streamed is not None:
            crcs.update({f"{name}.npy": crc for name, crc in _write_streamed(temp, streamed).items()})
            names = list(streamed.order)
            crcs = {**{name: crcs[name] for name in texts}, **{f"{name}.npy": crcs[f"{name}.npy"] for name in names}}
        meta = {"format": _FORMAT, "arrays": names, "crc32": crcs}
        write_private(temp / "meta.json", [json.dumps(meta).encode()])
        publish_dir(temp, path)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise


def _write_streamed(folder: Path, streamed: Streamed) -> dict[str, int]:
    """Write each streamed array's `.npy` file block by block; the CRC-32 of each."""
    crcs, written = {}, dict.fromkeys(streamed.types, 0)
    with ExitStack() as stack:
        outs = {}
        for name, dtype in streamed.types.items():
            outs[name] = stack.enter_context(open_private(folder / f"{name}.npy"))
            header = _npy_header(dtype, (streamed.lengths[name],))
            outs[name].write(header)
            crcs[name] = zlib.crc32(header)
        for block in streamed.blocks:
            for name, out in outs.items():
                chunk = block[name]
                if chunk.dtype != streamed.types[name] or chunk.ndim != 1:
                    raise ValueError(f"a block of {name} is {chunk.dtype} [{chunk.shape}], not {streamed.types[name]}")
                data = np.ascontiguousarray(chunk).data.cast("B") if chunk.size else b""
                out.write(data)
                crcs[name] = zlib.crc32(data, crcs[name])
                written[name] += len(chunk)
    if written != streamed.lengths:
        raise ValueError(f"streamed arrays of {written} values, announced {streamed.lengths}")
    return crcs


def read_arrays(path: Path) -> tuple[dict[str, bytes], dict[str, np.ndarray]]:
    """The texts and arrays of a folder from `write_arrays` (small files in memory, large ones
    memory-mapped and watched: core/store/mapped.py); ValueError (or OSError) when it is
    incomplete, damaged or another format."""
    meta = json.loads((path / "meta.json").read_bytes())
    if meta.get("format") != _FORMAT:
        raise ValueError(f"index format {meta.get('format')!r}")
    crcs = meta["crc32"]
    arrays = {name: read_array(path / f"{name}.npy", _crc_is(crcs[f"{name}.npy"])) for name in meta["arrays"]}
    texts = {
        name: bytes(read_checked(path / name, _crc_is(crc)))
        for name, crc in crcs.items()
        if name.removesuffix(".npy") not in arrays
    }
    return texts, arrays


def _crc_is(crc: int) -> Callable[[bytes | memoryview], bool]:
    return lambda data: crc32_released(data) == crc


def folder_bytes(path: Path) -> int:
    """Bytes of the files in a folder (0 when it vanished meanwhile)."""
    total = 0
    for file in path.glob("*"):
        try:
            total += file.stat().st_size
        except OSError:
            continue
    return total


def save_npy(path: Path, array: np.ndarray, mac: Mac | None = None) -> int | str:
    """Write `array` as `np.save` does (C order) and return the file's CRC-32 (its keyed digest
    with `mac`)."""
    array = np.require(array, requirements="C")
    data = array.data.cast("B") if array.size else b""
    return _write(path, [_npy_header(array.dtype, array.shape), data], mac)


def _npy_header(dtype: np.dtype, shape: tuple[int, ...]) -> bytes:
    """The header `np.save` writes before a C-order array of this type and shape."""
    header = io.BytesIO()
    fields = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": shape}
    np.lib.format.write_array_header_1_0(header, fields)
    return header.getvalue()


def write_blob(path: Path, data: bytes, mac: Mac | None = None) -> int | str:
    """Write `data` to `path` and return its CRC-32 (its keyed digest with `mac`)."""
    return _write(path, [data], mac)


class _Crc32:
    def __init__(self):
        self.value = 0

    def update(self, data) -> None:
        self.value = zlib.crc32(data, self.value)


def _write(path: Path, chunks: list, mac: Mac | None) -> int | str:
    if mac is None:
        crc = _Crc32()
        write_private(path, chunks, crc)
        return crc.value
    digest = mac.new()
    write_private(path, chunks, digest)
    return digest.hexdigest()


def crc32_of(path: Path) -> int:
    crc = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            crc = zlib.crc32(chunk, crc)
    return crc
