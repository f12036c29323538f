"""The explorer's saved traces hold what its caller was shown and the run's internals: readable by
their owner only, in an export folder only its owner may enter (docs/security.md)."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from mrptui.exports import trace_export, write_export
from mrptui.state import RunRecord

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
from tide_runs import run  # noqa: E402


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
