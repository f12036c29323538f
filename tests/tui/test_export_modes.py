"""The explorer's saved traces hold what its caller was shown and the run's internals: readable by
their owner only, in an export folder only its owner may enter (docs/security.md)."""

from __future__ import annotations

import os
import stat

import pytest

from mrptui.exports import trace_export, write_export
from mrptui.state import RunRecord
from tests.support.tide_runs import run  # noqa: E402


def test_a_saved_trace_is_0600_in_a_0700_export_folder_whatever_the_umask(tmp_path):
    export = trace_export(RunRecord(1, None, run(), done=True), lambda path: False)
    folder = tmp_path / "exports"
    mask = os.umask(0)
    try:
        said = write_export(export, str(folder / "trace-run1.jsonl"), folder)
    finally:
        os.umask(mask)
    assert said.startswith("saved ")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / "trace-run1.jsonl").stat().st_mode) == 0o600


def _exports(record: RunRecord) -> dict:
    from core.kernel.events import RetrievalScored
    from mrptui.exports import answer_export, evidence_export

    scored = next(event for event in record.events if isinstance(event, RetrievalScored))
    never = lambda path: False  # noqa: E731
    return {
        "trace": trace_export(record, never),
        "evidence": evidence_export(record, scored, never),
        "answer": answer_export(record, len(record.events) - 1, never),
    }


def test_every_export_is_0600_whatever_the_umask_and_replaces_only_its_own_kind(tmp_path):
    record = RunRecord(1, None, run(), done=True)
    folder = tmp_path / "exports"
    mask = os.umask(0)
    try:
        for name, export in _exports(record).items():
            path = folder / f"{name}{export.suffix}"
            write_export(export, str(path), folder)
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, name
            first = path.read_bytes()
            write_export(export, str(path), folder)  # its own earlier export: replaced
            assert path.read_bytes() == first
            mine = folder / f"mine-{name}{export.suffix}"
            mine.write_text("my own notes\n")
            with pytest.raises(OSError, match="not written by mrptui"):
                write_export(export, str(mine), folder)
            assert mine.read_text() == "my own notes\n", name
            other = next(e for n, e in _exports(record).items() if n != name)
            with pytest.raises(OSError, match="not written by mrptui"):
                write_export(other, str(path), folder)  # an export of another kind is not replaced either
            assert path.read_bytes() == first
            assert not [p for p in folder.iterdir() if p.name.endswith(".tmp")]
    finally:
        os.umask(mask)
