"""Worst cases at the file caps: how long one KB file or trace just under its cap takes to read.

The caps (`core/cnl/source.py` MAX_FILE_BYTES, `core/kernel/events.py` MAX_TRACE_BYTES) bound these;
the rows say what the bound costs. `n` is the file size in bytes; `--sizes` does not apply.

    python -m benchmarks --ops read_cap
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from benchmarks import measure, row, smoke
from core.cnl import read_file
from core.cnl.source import MAX_FILE_BYTES
from core.kernel.events import MAX_TRACE_BYTES, RunStarted, read_trace, to_json_line

OPS = ("read_cap",)
SMOKE_BYTES = 2**18  # a smoke run reads 256 KB files: it proves the op runs, not what the cap costs
# Shapes of a KB file just under the cap: dense one-line facts (most units per byte), the same
# as one fact per line, one long line of words (the longest sentence), Markdown units (the
# common case).
_SHAPES = {
    "facts.txt": "Orion uses Helix. ",
    # A fact per line, each its own text (its own id digits): a generated facts file.
    "facts-lines.txt": "Pump {n:06d} uses valve {n:06d}.\n",
    "one-line.txt": "word ",
    "units.md": "## Context Unit kiln::chunk-{n:03d}::unit-000\nRole: Explanation\nTopic: Glaze\nClaim: Ash glazes run.\n\n",
}


def _fill(path: Path, piece: str, size: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        written, n = 0, 0
        while written + len(piece) + 8 < size:
            text = piece.format(n=n) if "{n" in piece else piece
            out.write(text)
            written += len(text)
            n += 1


def run(sizes: list[int]) -> list[dict]:
    rows = []
    file_bytes, trace_bytes = (SMOKE_BYTES, SMOKE_BYTES) if smoke() else (MAX_FILE_BYTES, MAX_TRACE_BYTES)
    with tempfile.TemporaryDirectory() as folder:
        for name, piece in _SHAPES.items():
            path = Path(folder) / name
            _fill(path, piece, file_bytes)
            times, peak = measure([lambda path=path: read_file(path)])
            rows.append(row("mrptui", path.stat().st_size, f"read_cap {name}", times, peak))
        trace = Path(folder) / "run.jsonl"
        event = to_json_line(RunStarted(question="Why does ash glaze run? " * 40, as_of="2026-05-01", kb_version="v1"))
        _fill(trace, event + "\n", trace_bytes)
        times, peak = measure([lambda: read_trace(trace)])
        rows.append(row("mrptui", trace.stat().st_size, "read_cap trace.jsonl", times, peak))
    return rows
