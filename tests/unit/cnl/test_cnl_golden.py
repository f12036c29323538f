"""The Markdown reader's output on bell-founding notes, recorded with the reader as it was before
its per-line fast paths (tests/fixtures/cnl_golden/foundry.expected.json): the same units and the same
diagnostics, with file, line and column, whatever the line endings or a byte-order mark."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cnl import read_file, read_text

# Not in fixtures/cnl: other tests load that folder as a KB, and these notes are meant to be broken.
FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures" / "cnl_golden"
TEXT = (FIXTURES / "foundry.md").read_text(encoding="utf-8")
EXPECTED = json.loads((FIXTURES / "foundry.expected.json").read_text(encoding="utf-8"))


def as_json(units, diagnostics) -> dict:
    return {
        "units": [unit.model_dump(mode="json") for unit in units],
        "diagnostics": [diagnostic.model_dump(mode="json") for diagnostic in diagnostics],
    }


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_foundry_notes_read_as_recorded(newline: str) -> None:
    assert as_json(*read_text(TEXT.replace("\n", newline), "foundry.md")) == EXPECTED


def test_a_byte_order_mark_and_crlf_file_reads_as_recorded(tmp_path: Path) -> None:
    path = tmp_path / "foundry.md"
    path.write_bytes(b"\xef\xbb\xbf" + TEXT.replace("\n", "\r\n").encode("utf-8"))
    recorded = json.loads(json.dumps(EXPECTED).replace('"foundry.md"', json.dumps(str(path))))
    assert as_json(*read_file(path)) == recorded


def test_the_recording_covers_valid_units_and_every_kind_of_problem() -> None:
    codes = {diagnostic["code"] for diagnostic in EXPECTED["diagnostics"]}
    assert len(EXPECTED["units"]) >= 3 and len(codes) >= 10
