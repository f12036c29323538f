"""The worst single unit for one `ask` (issue 23): a 3.9 MB Markdown unit of 1.3M two-letter
tokens, just under the 4 MB file cap. Rows (each in a fresh subprocess, so the peak is its own):

- `ask_huge_unit`: a cold `ask` (index cache empty) then warm ones of a question that escalates to
  HDC; `peak_mb` is the process's resident high-water mark, interpreter and imports included
  (before `hdc.maxUnitTokens` it was 2,440 MB, 29 s in kb-balanced alone).
- `cancel_to_stop`: gs-symbolic and val-grounded working through the unit under a 100 ms
  timeout; each time is how long the plugin thread ran on after its deadline (goal ≤ 1 s).

    python -m benchmarks --ops ask_adversarial
"""

from __future__ import annotations

import json
import os
import resource
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks import repeats, row, smoke
from core.text.tokenizer import STOPWORDS

TOKENS = 1_300_000
SMOKE_TOKENS = 20_000  # a smoke run proves the rows come out, not what the cap costs
QUESTION = "How do I fix xq?"
WARM_ASKS = 3
TIMEOUT_MS = 100


def write_huge_unit(folder: Path) -> Path:
    words = [a + b for a in string.ascii_lowercase for b in string.ascii_lowercase if a + b not in STOPWORDS]
    picks = np.random.default_rng(3).integers(0, len(words), size=_tokens())
    claim = " ".join(words[i] for i in picks)
    path = folder / "huge.md"
    path.write_text(
        f"## Context Unit huge::chunk-000::unit-000\nRole: Explanation\nTopic: one huge unit\nClaim: {claim}.\n",
        encoding="utf-8",
    )
    return path


def _tokens() -> int:
    return SMOKE_TOKENS if smoke() else TOKENS


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure_ask(session) -> dict:
    """The first ask builds every index of the view; the next ones are warm."""
    from core.kernel.contract import Request

    times = []
    for _ in range(1 + repeats(WARM_ASKS)):
        started = time.perf_counter()
        list(session.run(Request(question=QUESTION)))
        times.append((time.perf_counter() - started) * 1000)
    return row("mrptui", 1, "ask_huge_unit", times, _peak_mb()) | {"first_ms": round(times[0], 1), "tokens": _tokens()}


def measure_cancel(session) -> dict:
    """How long gs-symbolic and val-grounded run on past a 100 ms deadline over the unit."""
    from core.infra.cancel import CancelToken
    from core.kernel.calls import run_isolated
    from core.kernel.contract import Request, RunContext
    from core.kernel.events import IntentDetected
    from core.units import Caller

    events = list(session.run(Request(question=QUESTION)))
    intent = next(e for e in events if isinstance(e, IntentDetected)).intents[0]
    registry, services = session.engine.registry, session.engine.services
    ctx = RunContext(request=Request(question=QUESTION), view=session.view(Caller()), services=services)
    evidence = registry.get("kb-fast").retrieve(ctx, intent)
    answer = registry.get("gs-symbolic").solve(ctx, intent, evidence)
    calls = {
        "gs-symbolic": lambda c: registry.get("gs-symbolic").solve(c, intent, evidence),
        "val-grounded": lambda c: registry.get("val-grounded").validate(c, intent, evidence, answer),
    }
    stopped = {}
    for plugin, call in calls.items():
        token = CancelToken(time.monotonic() + TIMEOUT_MS / 1000, "pluginTimeoutMs")
        timed = RunContext(request=ctx.request, view=ctx.view, services=services, cancel=token)
        outcome = run_isolated(plugin, lambda call=call, timed=timed: call(timed), token)
        if "thread" in outcome:  # still running at its deadline: time how long it runs on
            outcome["thread"].join()
            stopped[plugin] = (time.monotonic() - token.deadline) * 1000
    times = list(stopped.values()) or [0.0]
    return row("mrptui", 1, "cancel_to_stop", times, _peak_mb()) | {
        "stopped_ms": {plugin: round(ms, 1) for plugin, ms in stopped.items()}
    }


def _child(function: str, kb: str) -> None:
    from core.kernel.session import Session

    print(json.dumps(globals()[function](Session.open([Path(kb)]))))


def _in_subprocess(function: str, kb: Path, cache: Path) -> dict:
    root = Path(__file__).resolve().parent.parent
    code = f"from benchmarks.huge_unit import _child; _child({function!r}, {str(kb)!r})"
    env = {**os.environ, "MRPTUI_CACHE_DIR": str(cache), "PYTHONPATH": str(root)}
    env.pop("MRPTUI_NO_CACHE", None)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env, cwd=root)
    return json.loads(done.stdout.strip().splitlines()[-1])


def rows() -> list[dict]:
    """Both rows; `adversarial.py` adds them to `ask_adversarial` (named `rows`, not `run`, so the
    benchmark runner does not take this module for a suite of its own)."""
    with tempfile.TemporaryDirectory() as folder:
        kb = Path(folder) / "kb"
        kb.mkdir()
        write_huge_unit(kb)
        return [
            _in_subprocess("measure_ask", kb, Path(folder) / "cache"),
            _in_subprocess("measure_cancel", kb, Path(folder) / "cache"),
        ]


if __name__ == "__main__":
    for line in rows():
        print(json.dumps(line))
