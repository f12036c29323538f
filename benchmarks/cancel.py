"""How long a cancelled plugin runs on past its deadline (issue 14 target: stopped within 1 s).

A kb plugin that allocates in steps of about 5 ms and polls `ctx.cancel` between steps (what a
closure round or an index scan does) runs under a 200 ms plugin timeout; the row's times are the
lag from the token's deadline to the moment the plugin's thread left its loop, over `n` runs,
and `peak_mb` is what the runaway plugin allocated at most (it drops all of it when it stops).

    python -m benchmarks.cancel [RUNS]
"""

from __future__ import annotations

import statistics
import sys
import threading
import time
import tracemalloc

import numpy as np

from core.cancel import Cancelled
from core.config import EngineConfig, PlannerOrder
from core.engine import Engine
from core.plugins.base import (
    Descriptor,
    GoalSolver,
    GsResult,
    KnowledgePlugin,
    PluginType,
    Registry,
    Request,
    SdResult,
    SeedDetector,
    Status,
)
from core.plugins.planners import default_planners
from core.units import Act, Intent

OPS = ("cancel_stop",)
TIMEOUT_MS = 200
RUNS = 20
STEP_ELEMENTS = 400_000  # one step: about 5 ms of numpy work and 3 MB allocated


class _Seed(SeedDetector):
    descriptor = Descriptor(id="sd-one", type=PluginType.SD, name="one intent", description="fixed")

    def detect(self, ctx):
        intent = Intent(act=Act.EXPLAIN, target="anything", output="text")
        return SdResult(status=Status.SUCCESS, intent_cnl="x", intents=(intent,))


class _Runaway(KnowledgePlugin):
    descriptor = Descriptor(id="kb-runaway", type=PluginType.KB, name="runaway", description="polls its token")

    def __init__(self) -> None:
        self.stopped_at = 0.0
        self.deadline = 0.0
        self.done = threading.Event()

    def retrieve(self, ctx, intent):
        self.deadline = ctx.cancel.deadline or 0.0
        kept = []
        try:
            while True:
                ctx.cancel.raise_if_cancelled()
                kept.append(np.sqrt(np.arange(STEP_ELEMENTS, dtype=np.float64)))
                if len(kept) > 8:
                    kept.pop(0)
        except Cancelled:
            self.stopped_at = time.monotonic()
            raise
        finally:
            self.done.set()


class _Solver(GoalSolver):
    descriptor = Descriptor(id="gs-none", type=PluginType.GS, name="none", description="no answer")

    def solve(self, ctx, intent, evidence):
        return GsResult(status=Status.NO_CONTEXT)


def _lag_ms() -> float:
    runaway = _Runaway()
    plan = PlannerOrder(sd=("sd-one",), kb=("kb-runaway",), gs=("gs-none",), val=())
    config = EngineConfig(
        plugins=(), planners={"p": plan}, planner_sequence=("p",), budgets={"plugin_timeout_ms": TIMEOUT_MS}
    )
    engine = Engine(Registry([_Seed(), runaway, _Solver()]), default_planners(config.planners), config)
    list(engine.run(Request(question="anything"), view=None))
    if not runaway.done.wait(10):
        raise RuntimeError("the cancelled plugin did not stop within 10 s")
    return (runaway.stopped_at - runaway.deadline) * 1000


def run(sizes: list[int], runs: int = RUNS) -> list[dict]:
    """One row whatever the KB sizes: the lag does not depend on a KB."""
    _lag_ms()  # warm up: the first run also loads the stemmer
    tracemalloc.start()
    lags = [_lag_ms() for _ in range(runs)]
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return [
        {
            "engine": "mrptui-kernel",
            "n": runs,
            "op": "cancel_stop",
            "median_ms": round(max(statistics.median(lags), 0.001), 3),
            "p95_ms": round(max(float(np.percentile(lags, 95)), 0.001), 3),
            "peak_mb": round(peak, 1),
        }
    ]


if __name__ == "__main__":
    for row in run([], int(sys.argv[1]) if len(sys.argv) > 1 else RUNS):
        print(row)
