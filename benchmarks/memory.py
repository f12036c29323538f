"""Peak memory of loading a Markdown KB from disk: `python -m benchmarks.memory [SIZE ...]`.

The KB is written as Markdown files of 5,000 synthetic units each (20 files at 100k units), and
each load runs in a fresh subprocess, so the figure is what loading costs and nothing else that
ran before. Rows: `peak_mb` is the resident-set high-water mark above the RSS just before the
load (as in `benchmarks.measure`); `process_peak_mb` is the whole process's peak (ru_maxrss),
interpreter and imports included, i.e. what the machine must have free. `run` gives the shared
row format of `python -m benchmarks`; the standalone table adds the process peak and KB size.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks import repeats

OPS = ("load",)
UNITS_PER_FILE = 5_000
REPEATS = 3


def write_kb(n: int, folder: Path) -> list[Path]:
    """`n` synthetic units as Markdown files of `UNITS_PER_FILE` units each."""
    from benchmarks.synthetic import SyntheticKb
    from core.cnl import to_markdown

    units = SyntheticKb(n).units
    paths = []
    for number, start in enumerate(range(0, n, UNITS_PER_FILE)):
        path = folder / f"part-{number:03d}.md"
        path.write_text(to_markdown(units[start : start + UNITS_PER_FILE]), encoding="utf-8")
        paths.append(path)
    return paths


def _child(folder: str) -> None:
    """Load the KB once and print the load time, unit count and memory figures as JSON."""
    from benchmarks import measure
    from core.kb.knowledge_base import KnowledgeBase

    loaded: list[KnowledgeBase] = []
    times, peak_mb = measure([lambda: loaded.append(KnowledgeBase.load([Path(folder)]))])
    kb = loaded[0]
    errors = sum(1 for d in kb.diagnostics if d.is_error)
    process_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024)
    print(
        json.dumps(
            {
                "ms": times[0],
                "units": len(kb.units),
                "errors": errors,
                "peak_mb": peak_mb,
                "process_peak_mb": process_peak / 2**20,
            }
        )
    )


def _load_in_subprocess(folder: Path) -> dict:
    root = Path(__file__).resolve().parent.parent
    # Without the index cache: this row is what reading (and tokenising) the files costs.
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.memory", "--child", str(folder)],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "MRPTUI_NO_CACHE": "1"},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


ROW_KEYS = ("engine", "n", "op", "median_ms", "p95_ms", "peak_mb")


def run(sizes: list[int]) -> list[dict]:
    """Rows for `python -m benchmarks`, in its shared row format."""
    return [{key: row[key] for key in ROW_KEYS} for row in detailed(sizes)]


def detailed(sizes: list[int]) -> list[dict]:
    """Rows with the process peak, file count and KB size on disk added."""
    count = repeats(REPEATS)
    rows = []
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="mrptui-memory-") as tmp:
            folder = Path(tmp)
            files = write_kb(n, folder)
            size_mb = sum(p.stat().st_size for p in files) / 2**20
            loads = [_load_in_subprocess(folder) for _ in range(count)]
        if any(load["units"] != n or load["errors"] for load in loads):
            raise RuntimeError(f"the {n}-unit KB did not load cleanly: {loads[0]}")
        times = [load["ms"] for load in loads]
        rows.append(
            {
                "engine": "mrptui",
                "n": n,
                "op": "load",
                "median_ms": round(statistics.median(times), 3),
                "p95_ms": round(float(np.percentile(times, 95)), 3),
                "peak_mb": round(max(load["peak_mb"] for load in loads), 1),
                "process_peak_mb": round(max(load["process_peak_mb"] for load in loads), 1),
                "files": len(files),
                "kb_mb": round(size_mb, 1),
            }
        )
    return rows


def markdown(rows: list[dict]) -> str:
    lines = [
        "| n | files | KB MB | load median ms | p95 ms | load peak MB | process peak MB |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r['n']:,} | {r['files']} | {r['kb_mb']} | {r['median_ms']} | {r['p95_ms']} | {r['peak_mb']} | "
        f"{r['process_peak_mb']} |"
        for r in rows
    ]
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    if argv[:1] == ["--child"]:
        _child(argv[1])
        return
    started = time.perf_counter()
    rows = detailed([int(arg) for arg in argv] or [10_000, 100_000])
    print(markdown(rows))
    print(f"\n({time.perf_counter() - started:.0f} s; each load in a fresh process, {REPEATS} loads per size)")


if __name__ == "__main__":
    main(sys.argv[1:])
