"""How fast a cancel returns control: Esc while a plugin sleeps 10 s (issue: under 200 ms).

The whole path the explorer takes: a LiveRun pulled in a worker thread, the engine inside a slow
goal solver, `cancel()` from another thread, timed until the puller has delivered RunFinished.
"""

from __future__ import annotations

import threading
import time

from benchmarks import BenchmarkFailed, measure, repeats, row
from core.kernel.contract import Descriptor, GoalSolver, GsResult, PluginType, Request, Status
from core.kernel.session import Session
from core.kernel.steering import Steering
from mrptui.live_run import LiveRun

OPS = ("cancel_sleeping_plugin",)
RUNS = 20


class _Sleepy(GoalSolver):
    descriptor = Descriptor(id="gs-sleepy", type=PluginType.GS, name="sleepy", description="sleeps 10 s")

    def solve(self, ctx, intent, evidence):
        time.sleep(10)
        return GsResult(status=Status.SUCCESS, answer="late")


def _cancel_once(session: Session) -> float:
    """Milliseconds from cancel() to the puller delivering RunFinished."""
    steering = Steering()
    request = Request(question="What is Orion?", pins={"gs": "gs-sleepy"})
    live = LiveRun(lambda: session.run(request, steering=steering), steering, lambda: ())
    started = threading.Event()
    finished = threading.Event()

    def deliver(event) -> None:
        if event.kind == "attempt_started" and getattr(event, "plugin", "") == "gs-sleepy":
            started.set()
        if event.kind == "run_finished":
            finished.set()

    puller = threading.Thread(target=live.pull, args=(deliver, lambda point, event: None), daemon=True)
    puller.start()
    if not started.wait(10):
        raise BenchmarkFailed("cancel_sleeping_plugin", "no attempt_started event for gs-sleepy within 10 s")
    time.sleep(0.05)  # the plugin is asleep inside its call
    cancelled_at = time.perf_counter()
    live.cancel()
    if not finished.wait(10):
        raise BenchmarkFailed("cancel_sleeping_plugin", "no run_finished event within 10 s of the cancel")
    return (time.perf_counter() - cancelled_at) * 1000


def run(sizes: list[int]) -> list[dict]:
    session = Session.open()
    session.registry.add(_Sleepy())
    times: list[float] = []
    _, peak = measure([lambda: times.append(_cancel_once(session)) for _ in range(repeats(RUNS))])
    return [row("mrptui-explorer", len(session.kb.units), "cancel_sleeping_plugin", times, peak)]
