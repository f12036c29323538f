"""Speed and scale runs with peers side by side (DESIGN §14): `python -m benchmarks`.

Every module in this package that defines `run` takes part; adding a file adds its ops:

    OPS: tuple[str, ...]      op names the module produces (default: the module's name), used by --ops
    def run(sizes: list[int], *, ops: set[str], peers: bool) -> list[dict]

`run` may accept only `sizes`; `__main__` passes just the keyword options it declares. Each row is
{"engine", "n", "op", "median_ms", "p95_ms", "peak_mb"}; `row` and `measure` below build them.
`--smoke` (the test suite's run) sets SMOKE_ENV: `repeats` then cuts every repetition to a
minimum, so each op finishes in a second or two; its figures prove only that the op runs to the end.
An op that cannot finish (a hook it waits on never fires) raises `BenchmarkFailed` within its own
time budget: `__main__` reports it and goes on with the other modules.
"""

from __future__ import annotations

import atexit
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

_PROC = Path("/proc/self")
SMOKE_ENV = "MRPTUI_BENCH_SMOKE"

# Benchmarks never read or fill the user's index cache; each run gets its own.
if "MRPTUI_CACHE_DIR" not in os.environ:
    os.environ["MRPTUI_CACHE_DIR"] = tempfile.mkdtemp(prefix="mrptui-bench-cache-")
    atexit.register(shutil.rmtree, os.environ["MRPTUI_CACHE_DIR"], True)


def smoke() -> bool:
    return os.environ.get(SMOKE_ENV) == "1"


def repeats(full: int, smoke_count: int = 1) -> int:
    """How many times to repeat a measurement: `full`, or `smoke_count` in a smoke run."""
    return min(full, smoke_count) if smoke() else full


class BenchmarkFailed(RuntimeError):
    """An op gave up within its time budget; `rows` are what its module measured before that."""

    def __init__(self, op: str, reason: str, rows: list[dict] | None = None) -> None:
        super().__init__(f"{op}: {reason}")
        self.op, self.reason = op, reason
        self.rows = rows or []


def row(engine: str, n: int, op: str, times_ms: list[float], peak_mb: float) -> dict:
    return {
        "engine": engine,
        "n": n,
        "op": op,
        "median_ms": round(statistics.median(times_ms), 3),
        "p95_ms": round(float(np.percentile(times_ms, 95)), 3),
        "peak_mb": round(peak_mb, 1),
    }


def measure(calls: Sequence[Callable[[], object]], warmup: int = 0) -> tuple[list[float], float]:
    """Run each call once, timing each; returns per-call ms (after `warmup` calls) and peak MB.

    Peak memory is the resident-set high-water mark above the RSS at the start, so it costs nothing
    while timing (tracemalloc would slow the Python parts several-fold).
    """
    baseline = _reset_peak_rss()
    times = _timed(calls)[warmup:]
    return times, max(0.0, _peak_rss() - baseline) / 2**20


def measure_in_turns(
    engines: Sequence[Sequence[Callable[[], object]]], warmup: int = 0, block: int = 10
) -> list[tuple[list[float], float]]:
    """`measure` of several engines' calls over the same questions, timed in turns: each engine's
    warm-up alone (its peak MB is over that, where it makes what it makes lazily), then blocks of
    `block` calls, one engine's after the other's, the engine that goes first rotating by block.

    The machine's speed moves by half within minutes (a VM on a shared host: `cpu_loop` read
    381 / 589 / 442 ms in quiet runs minutes apart), evenly over every call of a pass, so two
    engines timed one after the other each get another moment's speed; timed in turns they share
    it and their ratio holds. A block keeps each engine's own data in cache, as one timed alone has
    it, where a call-by-call turn would charge each with the other's evictions."""
    peaks = [measure(calls[:warmup])[1] for calls in engines]
    times: list[list[float]] = [[] for _ in engines]
    for turn, start in enumerate(range(warmup, len(engines[0]), block)):
        for engine in [*range(turn % len(engines), len(engines)), *range(turn % len(engines))]:
            times[engine] += _timed(engines[engine][start : start + block])
    return list(zip(times, peaks, strict=True))


def _timed(calls: Sequence[Callable[[], object]]) -> list[float]:
    """Each call's wall time in ms, one after the other."""
    times = []
    for call in calls:
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return times


def _reset_peak_rss() -> int:
    """Reset the kernel's RSS high-water mark (Linux) and return the current RSS in bytes.

    Elsewhere the mark cannot be reset, so the figure is the growth of the process-wide maximum:
    a lower bound that reads 0 when an earlier step peaked higher.
    """
    try:
        (_PROC / "clear_refs").write_text("5")
        return _status_bytes("VmRSS")
    except OSError:
        return _peak_rss()


def _peak_rss() -> int:
    try:
        return _status_bytes("VmHWM")
    except OSError:
        scale = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB on Linux
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def _status_bytes(key: str) -> int:
    for line in (_PROC / "status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1]) * 1024
    raise OSError(f"{key} not in /proc/self/status")
