"""What a long conversation costs an `ask` (issue 36 target: `ask --session` at 2,000 records ≤ 1.2×
`ask` without).

memory_ask   the CLI as a user runs it, each ask a fresh process on the sample KB with a warm index
             cache: `mrptui ask Q` (row `memory_ask plain`) and `mrptui ask Q --session c` over a
             stored conversation of `n` records (row `memory_ask session`), alternated. The
             conversation is written once (summaries, notes and the newest raw turns, each citing a
             sample-KB unit with its digest, so every record is re-checked and scored); the first
             untimed session ask encodes its records once into the side file, as the first ask
             after an upgrade would. Each timed session ask adds a turn (and compacts), as in use.

    python -m benchmarks.memory_ask [RECORDS]
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import repeats, row, smoke

OPS = ("memory_ask",)
RECORDS = 2_000
SMOKE_RECORDS = 100
REPEATS = 7
# A question with nothing to resolve: both asks then do the same engine work, and the difference is
# what memory costs (reading, re-checking, scoring and recording the conversation).
QUESTION = "What is Orion?"


def write_conversation(root: Path, n: int) -> None:
    """A conversation `c` of `n` records for the default caller, citing units of the sample KB."""
    from core.kernel.session import Session
    from core.memory.cited import content_digest
    from core.memory.records import MemoryRecord, caller_digest, record_id
    from core.memory.store import MemoryStore
    from core.units import Caller

    session = Session.open()
    units = [u for u in session.units(Caller()) if u.claim][:50]
    config = session.engine_config.memory.model_copy(update={"max_records": max(n, 1)})
    caller = caller_digest(Caller())
    raw = min(n, config.compact_after_turns)
    now = time.time() - n
    records = []
    for i in range(n):
        unit = units[i % len(units)]
        kind = "turn" if i >= n - raw else "summary"
        records.append(
            MemoryRecord(
                id=record_id("bench", i),
                scope="session",
                kind=kind,
                caller=caller,
                conversation="c",
                ts=now + i,
                turn=i + 1,
                question=f"What does {unit.topic} say about record {i}?",
                lead=unit.claim[:200],
                entity=unit.topic,
                unit_ids=(unit.id,),
                unit_digests=(content_digest(unit),),
                confidence=1.0 if kind == "turn" else 0.8,
            )
        )
    store = MemoryStore(root, config)
    store.make_folders(caller)
    with store.journal(caller, "c").change() as log:
        log.rewrite(records)


def _ask(env: dict[str, str], *extra: str) -> tuple[float, float]:
    """Wall and CPU (user + system) milliseconds of one ask in a fresh process; on a loaded machine
    the CPU time says what the ask costs, the wall time what it waited too."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "mrptui.cli", "ask", QUESTION, *extra],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wall = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000


def run(sizes: list[int], ops: set[str] | None = None, records: int | None = None) -> list[dict]:
    """Two rows whatever the KB sizes (the cost depends on the records, not the KB), wall times;
    `cpu_median_ms` added to each."""
    if ops is not None and "memory_ask" not in ops:
        return []
    n = records or (SMOKE_RECORDS if smoke() else RECORDS)
    with tempfile.TemporaryDirectory(prefix="mrptui-memory-ask-") as folder:
        # Compiled modules are kept, as in an installed mrptui: a process that compiles its sources
        # every time would measure the compiler, not the ask.
        env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "MRPTUI_MEMORY_DIR": folder}
        write_conversation(Path(folder), n)
        if not smoke():  # the index cache, compiled modules and the record vectors, once
            _ask(env, "--session", "c")
        plain, session = [], []
        for _ in range(repeats(REPEATS)):
            plain.append(_ask(env))
            session.append(_ask(env, "--session", "c"))
    # Peak memory is a child's, not measured here: 0 marks it as not taken.
    return [
        {
            **row("mrptui", n, f"memory_ask {name}", [wall for wall, _ in times], 0.0),
            "cpu_median_ms": round(statistics.median(cpu for _, cpu in times), 1),
        }
        for name, times in (("plain", plain), ("session", session))
    ]


if __name__ == "__main__":
    plain_row, session_row = run([], records=int(sys.argv[1]) if len(sys.argv) > 1 else RECORDS)
    for result in (plain_row, session_row):
        print(result)
    print(
        f"session / plain, medians: wall {session_row['median_ms'] / plain_row['median_ms']:.2f}, "
        f"CPU {session_row['cpu_median_ms'] / plain_row['cpu_median_ms']:.2f}; load {os.getloadavg()[0]:.2f}"
    )
