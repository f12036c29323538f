"""The benchmark entry point runs every op to the end and emits well-formed rows (speed is measured
in benchmarks/, never here). A hook an op waits on that stops firing fails that op by name within its
time budget instead of hanging the run (issue 28: the keypress op once looped for 90 minutes)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks import SMOKE_ENV, BenchmarkFailed
from benchmarks import __main__ as bench_main

# Generous on a loaded 2-core machine: the whole smoke run takes ~20 s there.
SMOKE_BOUND_S = 240
ROW_KEYS = {"engine", "n", "op", "median_ms", "p95_ms", "peak_mb"}


def _run_bounded(*commands: list[str], root: Path) -> list[subprocess.CompletedProcess]:
    """Run `python -m benchmarks …` commands side by side (the machine has two cores); on a hang,
    fail naming the module and ops the stuck one was running."""
    children = [
        subprocess.Popen(c, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for c in commands
    ]
    deadline = time.monotonic() + SMOKE_BOUND_S
    results = []
    for command, child in zip(commands, children):
        try:
            stdout, stderr = child.communicate(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for other in children:
                other.kill()
            _, stderr = child.communicate()
            running = re.findall(r"^benchmarks: (.+)$", stderr, re.MULTILINE)
            pytest.fail(
                f"benchmark {running[-1] if running else '(none started)'} did not finish within "
                f"{SMOKE_BOUND_S} s; stderr tail:\n{stderr[-1500:]}"
            )
        results.append(subprocess.CompletedProcess(command, child.returncode, stdout, stderr))
    return results


def test_every_benchmark_op_finishes_at_a_tiny_size(root: Path, monkeypatch, capsys) -> None:
    """In this process: `python -m benchmarks` as a process is the next test's; here each op's run to
    the end is the point, and a second interpreter importing the engine and calibrating again added
    ~4 CPU s. The ops' own child processes (CLI asks, the Dask cluster) are what they measure."""
    monkeypatch.chdir(root)  # the ops' child processes import `benchmarks` from the checkout
    monkeypatch.setenv(SMOKE_ENV, "1")  # `main` sets it for its run; monkeypatch takes it away after
    with _bounded_in_process(capsys):
        try:
            bench_main.main(["--sizes", "200", "--json", "--smoke"])
        except SystemExit as failed:
            pytest.fail(f"{failed.code}\n{capsys.readouterr().err[-3000:]}")
    rows = json.loads(capsys.readouterr().out)["rows"]
    for r in rows:
        assert set(r) >= ROW_KEYS | {"load"}, r
        assert len(r["load"]) == 2 and min(r["load"]) >= 0, r
        assert 0 <= r["median_ms"] <= r["p95_ms"], r
        assert r["peak_mb"] >= 0, r
    emitted = {r["op"] for r in rows}
    declared = {op for name, module in bench_main.suites().items() for op in bench_main.ops_of(name, module)}
    missing = sorted(op for op in declared if not any(e == op or re.match(rf"{op}[ _]", e) for e in emitted))
    assert not missing, f"ops that emitted no row: {missing}"
    overlaps = [r["top10_overlap"] for r in rows if "top10_overlap" in r]
    assert all(0.0 <= overlap <= 1.0 for overlap in overlaps), overlaps
    keypress = [r for r in rows if r["op"] == "tui_keypress"]
    assert [r["n"] for r in keypress] == [200] and keypress[0]["median_ms"] > 0


class _BoundSpent(Exception):
    """Raised in the main thread by SIGALRM: an exception no op raises for its own reasons."""


@contextlib.contextmanager
def _bounded_in_process(capsys: pytest.CaptureFixture[str], seconds: int = SMOKE_BOUND_S) -> Iterator[None]:
    """Interrupt a run in this process that outlives `seconds` (SIGALRM reaches the main thread
    whatever it waits on) and fail naming the module it was running, as `_run_bounded` does."""

    def _expired(signum: int, frame: object) -> None:
        raise _BoundSpent

    previous = signal.signal(signal.SIGALRM, _expired)
    signal.alarm(seconds)
    try:
        yield
    except _BoundSpent:
        stderr = capsys.readouterr().err
        running = re.findall(r"^benchmarks: (.+)$", stderr, re.MULTILINE)
        pytest.fail(
            f"benchmark {running[-1] if running else '(none started)'} did not finish within "
            f"{seconds} s; stderr tail:\n{stderr[-1500:]}"
        )
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_a_run_in_process_that_outlives_its_bound_fails_naming_the_module_it_was_in(capsys) -> None:
    with pytest.raises(pytest.fail.Exception, match=r"benchmark stuck \(hook\) did not finish within 1 s"):
        with _bounded_in_process(capsys, seconds=1):
            print("benchmarks: stuck (hook)", file=sys.stderr, flush=True)
            time.sleep(30)


def test_benchmark_entry_emits_valid_rows(root: Path) -> None:
    command = [sys.executable, "-m", "benchmarks", "--sizes", "200", "--json", "--no-peers", "--smoke"]
    command += ["--ops", "build,bm25_top10,hdc_scan"]
    report = json.loads(_run_bounded(command, root=root)[0].stdout)
    rows = report["rows"]
    assert {(r["engine"], r["op"]) for r in rows} == {
        ("calibration", "cpu_loop"),
        ("calibration", "memory_read"),
        ("calibration", "bare_import"),
        ("calibration", "py_stem"),
        ("mrptui-bm25", "build"),
        ("mrptui-hdc", "build"),
        ("mrptui", "bm25_top10"),
        ("mrptui", "hdc_scan"),
        ("bandwidth-floor", "hdc_scan"),
    }
    for r in rows:
        assert set(r) == ROW_KEYS | {"load"}
        assert r["n"] == (0 if r["engine"] == "calibration" else 200)
        assert 0 < r["median_ms"] <= r["p95_ms"]
    # Without peers the one ratio this run can give is the HDC scan against its floor.
    assert [r["ratio"] for r in report["ratios"]] == ["HDC scan / its bandwidth floor"]


def test_a_failed_op_is_reported_and_the_other_rows_kept(monkeypatch, capsys) -> None:
    class Fine:
        OPS = ("fine",)

        @staticmethod
        def run(sizes):
            return [{"engine": "x", "n": sizes[0], "op": "fine", "median_ms": 1.0, "p95_ms": 1.0, "peak_mb": 0.0}]

    class Stuck:
        OPS = ("stuck",)

        @staticmethod
        def run(sizes):
            raise BenchmarkFailed("stuck", "the hook never fired within 1 s")

    monkeypatch.setattr(bench_main, "suites", lambda: {"stuck": Stuck, "fine": Fine})
    monkeypatch.setattr(bench_main, "calibrate", lambda: [])
    with pytest.raises(SystemExit) as exited:
        bench_main.main(["--sizes", "5", "--json"])
    assert "stuck: the hook never fired within 1 s" in str(exited.value.code)
    assert [r["op"] for r in json.loads(capsys.readouterr().out)["rows"]] == ["fine"]


def test_ratios_compare_rows_of_the_same_size_and_machine_rows_of_any() -> None:
    from benchmarks.ratios import ratio_rows

    def r(engine: str, op: str, n: int, ms: float) -> dict:
        return {"engine": engine, "op": op, "n": n, "median_ms": ms}

    rows = [
        r("mrptui", "bm25_top10", 100, 3.0),
        r("pisa", "bm25_top10", 100, 2.0),
        r("pisa", "bm25_top10", 1000, 9.0),
        r("mrptui", "ask", 100, 40.0),
        r("mrptui", "hdc_scan", 100, 7.0),
        r("mrptui-sample-kb", "cli_ask_wall", 0, 300.0),
        r("calibration", "bare_import", 0, 250.0),
    ]
    found = {(f["ratio"], f["n"]): (f["value"], f["met"]) for f in ratio_rows(rows)}
    assert found == {
        ("BM25 top-10 / PISA", 100): (1.5, True),
        ("ask / (BM25 top-10 + HDC scan)", 100): (4.0, False),
        ("CLI ask on the sample KB / bare import", 0): (1.2, True),
    }


def test_engines_timed_in_turns_share_each_block_of_questions() -> None:
    """Each engine's warm-up alone, then blocks of the same questions, the engine going first
    rotating: both are timed at the same moments, and each keeps its own times."""
    from benchmarks import measure_in_turns

    order: list[tuple[str, int]] = []
    engines = [[lambda e=engine, i=i: order.append((e, i)) for i in range(7)] for engine in ("ours", "peer")]
    timed = measure_in_turns(engines, warmup=2, block=2)
    warm = [("ours", 0), ("ours", 1), ("peer", 0), ("peer", 1)]
    blocks = [("ours", 2), ("ours", 3), ("peer", 2), ("peer", 3)]
    blocks += [("peer", 4), ("peer", 5), ("ours", 4), ("ours", 5), ("ours", 6), ("peer", 6)]
    assert order == warm + blocks
    assert [len(times) for times, _ in timed] == [5, 5]
    assert all(t >= 0 for times, _ in timed for t in times)


@pytest.fixture
def small_session():
    from benchmarks.synthetic import SyntheticKb
    from core.kb.knowledge_base import KnowledgeBase
    from core.kernel.session import Session

    synthetic = SyntheticKb(60, query_count=5)
    return Session.from_kb(KnowledgeBase.from_units(synthetic.units)), [f"what is {q}?" for q in synthetic.queries]


def test_keypress_op_fails_by_name_when_the_app_never_starts_a_run(monkeypatch, small_session) -> None:
    from benchmarks import tui
    from mrptui.run_driver import RunDriver

    monkeypatch.setattr(RunDriver, "start_run", lambda self, request: None)
    session, questions = small_session
    with pytest.raises(BenchmarkFailed, match="did not make a live run") as failed:
        asyncio.run(tui._keypress_samples(session, questions, samples=3, budget_s=30))
    assert failed.value.op == "tui_keypress"


def test_keypress_op_gives_up_when_its_budget_is_spent(small_session) -> None:
    from benchmarks import tui

    session, questions = small_session
    with pytest.raises(BenchmarkFailed, match=r"budget of 1 s spent"):
        asyncio.run(tui._keypress_samples(session, questions, samples=100_000, budget_s=1))


def test_nlp_benchmark_emits_tag_and_link_rows() -> None:
    from benchmarks import nlp

    rows = nlp.run(ops={"nlp_tag", "nlp_link"})
    assert {r["op"] for r in rows} == {"nlp_tag", "nlp_link"}
    assert all(r["n"] > 0 and 0 < r["median_ms"] <= r["p95_ms"] for r in rows)


def test_first_paint_peak_is_the_childs_own_not_its_parents() -> None:
    """A full run's process is large by the time it measures first paint; neither RUSAGE_CHILDREN
    (every earlier child's maximum) nor the child's ru_maxrss (its pre-exec pages) may leak in."""
    from benchmarks import tui

    ballast = bytearray(600 * 2**20)
    ballast[::4096] = b"\1" * len(ballast[::4096])  # resident, not just reserved
    times, peak_mb = tui.first_paint_ms(1)
    assert len(times) == 1 and 0 < peak_mb < 450
    del ballast


def test_cold_open_cpu_counts_the_work_a_child_has_reaped() -> None:
    """The build workers of a cold open are the fork server's children: their CPU reaches the
    opening process only through the fork server's reaped-children time, which the `mrptui-cpu`
    row must count (here a child that ran and reaped a CPU-bound grandchild, and still runs)."""
    from benchmarks.store import tree_cpu_ms

    script = (
        "import os, subprocess, sys\n"
        "subprocess.run([sys.executable, '-c', 'sum(range(40_000_000))'], check=True)\n"
        "t = os.times(); print(t.children_user + t.children_system, flush=True)\n"
        "sys.stdin.read()\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        reaped_ms = float(child.stdout.readline()) * 1000
        own = os.times()
        before_ms = (own.user + own.system + own.children_user + own.children_system) * 1000
        counted_ms = tree_cpu_ms() - before_ms
    finally:
        child.communicate("")
    assert reaped_ms > 100, reaped_ms  # the grandchild's sum is real work, well above one clock tick
    assert counted_ms >= 0.9 * reaped_ms, (counted_ms, reaped_ms)
