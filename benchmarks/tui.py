"""The explorer's responsiveness (DESIGN §13, §14: "TUI cold start < 1 s"; input never blocks).

- `tui_first_paint`: cold start of `mrptui` on the sample KB, from process start to the first frame of
  the main screen. Each sample is a fresh interpreter running `mrptui.cli.main([])` (argument
  parsing, imports, app start-up; the KB loads after the first frame, in a worker), headless at 160×45; the frame is also rendered to ANSI
  as a terminal driver would, only the write is skipped. The time is the parent's wall clock from
  spawning the process to the child's "painted" line.
- `tui_keypress`: keypress → repaint latency while the engine works. The explorer runs on a
  synthetic KB (`Session.from_kb`), questions run back to back in its thread worker, and keys that
  move focus between panels (1, 3, 4, 2) arrive as a terminal driver sends them; a sample is the time
  from the key to the first frame painted with the focus moved, for every key pressed while a run
  was live (RunControl's own signal), whenever the app got to it: a key that waits behind the run's
  trace events until the run has ended waited all the same (counting only keys handled while the
  run still lived left the slower ones out: docs/benchmarks.md). Trace events keep arriving and
  being applied meanwhile, as in real use. Every wait has a bound and the op a budget: a hook that stops
  firing fails the op by name (`BenchmarkFailed`) instead of hanging the run.

`python -m benchmarks.tui [sizes…]` prints the rows; `python -m benchmarks --ops tui_keypress`.
Peak MB: the child's own resident set at its first frame; for keypresses, what the app adds to the session.
"""

from __future__ import annotations

import asyncio
import os
import random
import select
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks import BenchmarkFailed, _peak_rss, _reset_peak_rss, repeats, row
from benchmarks.synthetic import SyntheticKb

OPS = ("tui_first_paint", "tui_keypress")
ENGINE = "mrptui"
FIRST_PAINT_RUNS = 10
KEYPRESS_SAMPLES = 200
KEYPRESS_BUDGET_S = 900.0  # the whole op at one size: ~1 min at 100k on a quiet machine, ~10 under load 6
WAIT_S = 10.0  # one key's focus move or frame, the KB opening, the last run's end
PAINT_WAIT_S = 60.0  # one cold start to its first frame
SIZE = (160, 45)
PANEL_KEYS = ("1", "3", "4", "2")  # plan, evidence, proofs, attempts
PANEL_IDS = {"1": "plan", "2": "attempts", "3": "evidence", "4": "proofs"}

# The child: the real CLI entry point, with the app forced headless and its first frame reported.
_CHILD = (
    r"""
import os, resource, sys
from mrptui import app as app_module

fd = int(sys.argv[1])
cls = app_module.ExplorerApp

def _peak_kib():
    # This image's own high-water mark: ru_maxrss would also count the parent's pages before exec.
    try:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
original_display = cls._display
original_run = cls.run

def _display(self, screen, update):
    original_display(self, screen, update)
    if update is not None and type(screen).__name__ == "MainScreen" and not getattr(self, "_painted", False):
        update.render_segments(self.console)   # what a terminal driver would write
        self._painted = True
        os.write(fd, b"painted %%d\n" %% _peak_kib())
        self.exit()

def run(self, *args, **kwargs):
    kwargs.update(headless=True, size=(%d, %d))
    return original_run(self, *args, **kwargs)

cls._display, cls.run = _display, run
from mrptui.cli import main
sys.exit(main([]))
"""
    % SIZE
)


def first_paint_ms(runs: int | None = None) -> tuple[list[float], float]:
    """Wall-clock ms from spawning `mrptui` (sample KB) to its first painted frame, per run, and the
    largest resident set (MB) a child had at its first frame (its own: earlier children of this
    process, a 100k cold open among them, must not count)."""
    root = Path(__file__).resolve().parent.parent
    times, peak_mb = [], 0.0
    for _ in range(repeats(FIRST_PAINT_RUNS) if runs is None else runs):
        read, write = os.pipe()
        started = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(write)],
            cwd=root,
            pass_fds=(write,),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        os.close(write)
        with os.fdopen(read, "rb") as pipe:
            # A child that never paints (a renamed screen or hook) must not block the run: wait a bounded time.
            ready, _, _ = select.select([pipe], [], [], PAINT_WAIT_S)
            line = pipe.readline() if ready else b""
        elapsed = (time.perf_counter() - started) * 1000
        if not line.startswith(b"painted "):
            child.kill()
            _, stderr = child.communicate()
            tail = stderr.decode(errors="replace")[-2000:] or "(no output)"
            raise BenchmarkFailed("tui_first_paint", f"mrptui did not paint within {PAINT_WAIT_S:g} s: {tail}")
        child.communicate(timeout=PAINT_WAIT_S)
        times.append(elapsed)
        peak_mb = max(peak_mb, int(line.split()[1]) / 1024)  # ru_maxrss is in KiB on Linux
    return times, peak_mb


class _Waits:
    """The keypress op's time budget: every wait in it ends by `deadline` or fails the op by name."""

    def __init__(self, budget_s: float) -> None:
        self.budget_s = budget_s
        self.deadline = time.perf_counter() + budget_s

    async def until(self, done: Callable[[], bool], what: str, limit_s: float = WAIT_S) -> None:
        stop = time.perf_counter() + limit_s
        while not done():
            now = time.perf_counter()
            if now > self.deadline:
                raise BenchmarkFailed("tui_keypress", f"budget of {self.budget_s:g} s spent waiting: {what}")
            if now > stop:
                raise BenchmarkFailed("tui_keypress", f"{what} within {limit_s:g} s")
            await asyncio.sleep(0.0005)

    def check(self, progress: str) -> None:
        if time.perf_counter() > self.deadline:
            raise BenchmarkFailed("tui_keypress", f"budget of {self.budget_s:g} s spent: {progress}")


def _start_run(app, question: str) -> bool:
    """Ask through the app and report its own signal: a new run record that RunControl holds live."""
    from core.kernel.contract import Request

    before = app.current.run_id if app.current is not None else 0
    app.runner.start_run(Request(question=question, caller=app.caller))
    run = app.current
    return run is not None and run.run_id > before and app.control.is_live


async def _keypress_samples(
    session, questions: list[str], samples: int, seed: int = 7, budget_s: float = KEYPRESS_BUDGET_S
) -> tuple[list[float], int]:
    """Latencies (ms) of panel keys pressed while the engine runs; also how many runs that took."""
    from textual import events

    from core.units import Caller
    from mrptui.app import ExplorerApp

    app = ExplorerApp(
        session, Caller(), "synthetic", show_durations=False, cursor_blink=False, poll_interval=0, keymap_path=None
    )
    frames: list[tuple[float, object]] = []  # every frame: when it was painted, what had the focus
    original = app._display

    def display(screen, update) -> None:
        original(screen, update)
        if update is not None and not app._batch_count:
            update.render_segments(app.console)  # headless skips it; a terminal would pay for it
            frames.append((time.perf_counter(), app.focused))

    app._display = display  # type: ignore[method-assign]
    rng = random.Random(seed)
    latencies: list[float] = []
    runs = 0
    waits = _Waits(budget_s)
    async with app.run_test(size=SIZE) as pilot:
        app.main.action_panel("attempts")
        await pilot.pause()
        await waits.until(lambda: not app.lifecycle.state.loading, "the app did not finish opening the KB")
        try:
            key_index = 0
            while len(latencies) < samples:
                waits.check(f"{len(latencies)} of {samples} samples over {runs} runs")
                if not app.control.is_live:
                    if not _start_run(app, questions[runs % len(questions)]):
                        raise BenchmarkFailed(
                            "tui_keypress",
                            "start_run did not make a live run (the app refused it "
                            "or no longer signals it through RunControl)",
                        )
                    runs += 1
                    await asyncio.sleep(rng.uniform(0.0, 0.01))
                    continue
                key = PANEL_KEYS[key_index % len(PANEL_KEYS)]
                key_index += 1
                target = app.main.query_one(f"#{PANEL_IDS[key]}")
                if app.focused is target:
                    continue
                seen, pressed = len(frames), time.perf_counter()
                app._driver.send_message(events.Key(key, key))  # as the terminal driver delivers it

                def shown(seen: int = seen, target: object = target) -> float | None:
                    return next((painted for painted, focused in frames[seen:] if focused is target), None)

                await waits.until(
                    lambda: shown() is not None, f"no frame showed key {key!r} moving the focus to {target.id}"
                )
                latencies.append((shown() - pressed) * 1000)
                await asyncio.sleep(rng.uniform(0.0, 0.02))
        finally:
            await _settle(app, pilot)
    return latencies, runs


async def _settle(app, pilot) -> None:
    """Cancel a live run and wait, bounded, for its worker and its last messages: the app is torn
    down next, and a run's late events must not reach a removed screen."""
    from textual.worker import WorkerState

    app.control.cancel()

    # Polled, not `wait_for_complete()`: that raises for a worker the app cancelled (a KB warm-up
    # that a newer one replaced), and only whether they still run matters here. Only the engine's
    # run workers: the warm-up goes on tagging a 100k view for minutes, and teardown cancels it.
    def engine_running() -> bool:
        return any(
            w.group.startswith("engine-") and w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in app.workers
        )

    await _Waits(WAIT_S).until(lambda: not engine_running(), "the engine worker did not stop after a cancel")
    await pilot.pause()


def keypress_row(n: int, samples: int | None = None) -> dict:
    from core.kb.knowledge_base import KnowledgeBase
    from core.kernel.contract import Request
    from core.kernel.session import Session

    synthetic = SyntheticKb(n, query_count=50)
    session = Session.from_kb(KnowledgeBase.from_units(synthetic.units))
    questions = [f"what is {q}?" for q in synthetic.queries]
    list(session.run(Request(question=questions[0])))  # indexes are built once, as a running app has them
    baseline = _reset_peak_rss()
    wanted = repeats(KEYPRESS_SAMPLES) if samples is None else samples
    latencies, _ = asyncio.run(_keypress_samples(session, questions, wanted))
    peak_mb = max(0.0, _peak_rss() - baseline) / 2**20  # what the app adds on top of the session
    return row(ENGINE, n, "tui_keypress", latencies, peak_mb)


def first_paint_row() -> dict:
    from core.infra.resources import sample_kb_dir
    from core.kb.knowledge_base import KnowledgeBase

    units = len(KnowledgeBase.load([sample_kb_dir()]).units)
    times, child_peak_mb = first_paint_ms()
    return row(ENGINE, units, "tui_first_paint", times, child_peak_mb)


def run(sizes: list[int], *, ops: set[str] | None = None) -> list[dict]:
    ops = set(OPS) if ops is None else ops
    rows = []
    if "tui_first_paint" in ops:
        rows.append(first_paint_row())
    for n in sizes if "tui_keypress" in ops else ():
        try:
            rows.append(keypress_row(n))
        except BenchmarkFailed as exc:
            raise BenchmarkFailed(f"{exc.op} at n={n:,}", exc.reason, rows) from None
    return rows


if __name__ == "__main__":
    from benchmarks.__main__ import markdown

    print(markdown(run([int(s) for s in (sys.argv[1:] or ["100000"])])))
