"""The build comparer (benchmarks/build_compare.py): two builds of one KB under one MAC key are
identical file by file, and any byte changed, file missing or other key is reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.build_compare import build, differences, main
from tests.support.store_kb import write_kb

KEY = bytes(range(32))


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> tuple[Path, Path, Path]:
    root = tmp_path_factory.mktemp("compare")
    write_kb(root / "kb", files=2, per_file=30)
    for name in ("a", "b"):
        assert build(root / name, root / "kb", KEY) == 2
    return root / "kb", root / "a", root / "b"


def test_two_builds_under_one_key_are_identical_artefact_by_artefact(builds) -> None:
    _, a, b = builds
    names = {p.name for p in (a / "segments").rglob("*") if p.is_file()}
    # Segment arrays, the BM25 part and the HDC sets are all compared.
    assert {"terms.npy", "units.jsonl", "stems.json", "norms.npy", "meta.json"} <= names
    assert any(p.suffix == ".npy" and "hdc-" in p.parent.name for p in (a / "segments").rglob("*"))
    assert differences(a, b) == []
    assert main(["compare", str(a), str(b)]) == 0


def test_a_changed_byte_a_missing_file_and_another_key_are_reported(builds, tmp_path) -> None:
    kb, a, b = builds
    other = tmp_path / "other"
    build(other, kb, bytes(32))
    # Another key changes every keyed digest that meta.json files record.
    assert any(line.endswith("meta.json: bytes differ") for line in differences(a, other))
    changed = tmp_path / "changed"
    build(changed, kb, KEY)
    terms = next((changed / "segments").rglob("terms.npy"))
    data = bytearray(terms.read_bytes())
    data[-1] ^= 0xFF
    terms.write_bytes(bytes(data))
    norms = next((changed / "segments").rglob("norms.npy"))
    norms.unlink()
    found = differences(a, changed)
    assert any(line.endswith("terms.npy: bytes differ") for line in found)
    assert any(line.endswith("norms.npy: in one cache only") for line in found)
    assert main(["compare", str(a), str(changed)]) == 1


def test_build_refuses_an_existing_cache(builds) -> None:
    kb, a, _ = builds
    with pytest.raises(FileExistsError):
        build(a, kb, KEY)
