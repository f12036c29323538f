"""How long a cancelled plugin runs on past its deadline (issue 14 target: stopped within 1 s).

cancel_stop          a kb plugin that allocates in steps of about 5 ms and polls `ctx.cancel`
                     between steps runs through the kernel under a 200 ms plugin timeout; the
                     times are the lag from the token's deadline to the moment its thread left
                     its loop, over `n` runs, and `peak_mb` is what it allocated at most.
cancel_stop_closure  the ThinkingDB closure under the adversarial rule set (benchmarks.adversarial,
                     ~6,800 facts, every limit at its upper bound, so unstopped it runs until
                     maxDerivedFacts) called the way the kernel calls a plugin, with a token due
                     after 50 ms; the times are the lag from that deadline to the call's return,
                     and `peak_mb` what building the facts and two cancelled queries allocated.
Timings run without tracemalloc (it slows numpy-heavy code several times); peaks in a second pass.

    python -m benchmarks.cancel [RUNS]
"""

from __future__ import annotations

import sys
import threading
import time
import tracemalloc

import numpy as np

from benchmarks import repeats, row
from core.infra.cancel import Cancelled, CancelToken
from core.infra.config import EngineConfig, PlannerOrder
from core.kernel.calls import run_isolated
from core.kernel.contract import (
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
from core.kernel.engine import Engine
from core.kernel.planners import default_planners
from core.units import Act, Intent

OPS = ("cancel_stop", "cancel_stop_closure")
TIMEOUT_MS = 200
CLOSURE_DEADLINE_S = 0.05
ADVERSARIAL_FACTS = 6_800
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


def _closure_lags_ms(queries_wanted: int | None = None) -> tuple[int, list[float]]:
    from benchmarks.adversarial import adversarial_rules, adversarial_units
    from core.retrieval.thinkingdb import ThinkingDB

    units, queries = adversarial_units(ADVERSARIAL_FACTS)
    db = ThinkingDB.build(units, adversarial_rules())
    lags = []
    for query in queries[:queries_wanted]:
        token = CancelToken(time.monotonic() + CLOSURE_DEADLINE_S, "pluginTimeoutMs (50 ms)")
        returned: list[float] = []

        def call(query: str = query, token: CancelToken = token, returned: list[float] = returned) -> object:
            try:
                return db.query(query, stop=token)
            finally:
                returned.append(time.monotonic())

        run_isolated("kb-thinkingdb", call, token)
        token.cancel("pluginTimeoutMs (50 ms) passed")
        for _ in range(1000):
            if returned:
                break
            time.sleep(0.01)
        if not returned:
            raise RuntimeError("the cancelled closure did not stop within 10 s")
        lags.append(max((returned[0] - token.deadline) * 1000, 0.001))
    return len(units), lags


def _peak_mb(call) -> float:
    """What `call` allocated at most; a separate pass, as tracemalloc slows numpy-heavy code ~5x."""
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def run(sizes: list[int], ops: set[str] | None = None, runs: int | None = None) -> list[dict]:
    """One row per op whatever the KB sizes: the lag does not depend on them."""
    rows = []
    runs = repeats(RUNS, 2) if runs is None else runs
    if ops is None or "cancel_stop" in ops:
        _lag_ms()  # warm up: the first run also loads the stemmer
        lags = [max(_lag_ms(), 0.001) for _ in range(runs)]
        rows.append(row("mrptui-kernel", runs, "cancel_stop", lags, _peak_mb(_lag_ms)))
    if ops is None or "cancel_stop_closure" in ops:
        from benchmarks.adversarial import QUERIES

        facts, lags = _closure_lags_ms(repeats(QUERIES, 2))
        rows.append(row("mrptui-tdb", facts, "cancel_stop_closure", lags, _peak_mb(lambda: _closure_lags_ms(2))))
    return rows


if __name__ == "__main__":
    for result in run([], runs=int(sys.argv[1]) if len(sys.argv) > 1 else RUNS):
        print(result)
