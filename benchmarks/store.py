"""The index store at scale: opening a KB with and without its cache, reloading one edited file,
a question with context sentences, and the whole `mrptui ask` process on the sample KB.

The KB is written as Markdown files of 5,000 synthetic units (`benchmarks.memory.write_kb`).
`cold_open` and `warm_open` run in fresh processes, so nothing a previous step left in memory
helps: both time opening the session to the first answer of `ask`, cold with an empty cache,
warm with the cache the cold one left. `cold_open_ready` is the same cold process until every
index is ready (BM25 merged, ThinkingDB, and the HDC index, whose sets a cold open encodes after
the segments: core/store/pool.py). Their `peak_mb` is the child process's whole peak RSS (VmHWM),
taken once every index is ready; a second `cold_open` row, engine `mrptui-first-answer`, gives
the same process's peak at its first answer (before warm-up merges BM25 and reads the HDC sets).
With peers, `cold_open` also times tantivy's build of the same units (`tantivy`, `build`): the
ratio of issue 41 divides the cold open by it (benchmarks/ratios.py), both from the same run.
A third `cold_open` row, engine `mrptui-cpu`, gives the CPU time (user + system, in its `ms`
columns) of every process to the first answer: the opening process and the build workers, which
its fork server has reaped by then (the HDC encoders, still running, are left out). On the shared
2-core machine a wall moves with the other jobs' load; this row moves with the work.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import bm25_peers, measure, repeats, row, smoke
from benchmarks.memory import write_kb
from benchmarks.synthetic import SyntheticKb

OPS = (
    "cold_open",
    "cold_open_ready",
    "warm_open",
    "reload_one_file",
    "ask_with_context",
    "cli_ask_wall",
    "bm25_parts_top10",
)
REPEATS = 3
ROOT = Path(__file__).resolve().parent.parent


def run(sizes: list[int], *, ops: set[str], peers: bool = True) -> list[dict]:
    rows = []
    if "cli_ask_wall" in ops:
        rows.append(_cli_ask_wall())
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="mrptui-store-") as tmp:
            folder, cache = Path(tmp) / "kb", Path(tmp) / "cache"
            folder.mkdir()
            write_kb(n, folder)
            rows += _process_rows(n, folder, cache, ops)
            rows += _peer_build_rows(n) if peers and "cold_open" in ops else []
            if ops & {"reload_one_file", "ask_with_context", "bm25_parts_top10"}:
                rows += _in_process_rows(n, folder, cache, ops)
    return rows


def _process_rows(n: int, folder: Path, cache: Path, ops: set[str]) -> list[dict]:
    rows = []
    for op in ("cold_open", "warm_open"):
        if op not in ops and not (op == "cold_open" and ops & {"warm_open", "cold_open_ready"}):
            continue
        results = []
        for _ in range(repeats(REPEATS) if op == "warm_open" else 1):
            if op == "cold_open":
                _clear(cache)
            results.append(_child(op, folder, cache, n))
        peak = max(r["process_peak_mb"] for r in results)
        if op in ops:
            rows.append(row("mrptui", n, op, [r["ms"] for r in results], peak))
        if op == "cold_open" and op in ops:
            first_peak = max(r["first_answer_peak_mb"] for r in results)
            rows.append(row("mrptui-first-answer", n, op, [r["ms"] for r in results], first_peak))
            rows.append(row("mrptui-cpu", n, op, [r["cpu_ms"] for r in results], first_peak))
        if op == "cold_open" and "cold_open_ready" in ops:
            rows.append(row("mrptui", n, "cold_open_ready", [r["ready_ms"] for r in results], peak))
    return rows


def _peer_build_rows(n: int) -> list[dict]:
    """tantivy's build of the KB's units, given our tokens as `benchmarks/retrieval.py` gives them."""
    peer = bm25_peers.named("tantivy")
    if peer is None:
        return []
    documents = bm25_peers.documents(SyntheticKb(n).units)
    times, peak = measure([lambda: peer.build(documents)])
    return [row(peer.engine, n, "build", times, peak)]


def _in_process_rows(n: int, folder: Path, cache: Path, ops: set[str]) -> list[dict]:
    os.environ["MRPTUI_CACHE_DIR"] = str(cache)
    from core.kernel.contract import Request
    from core.kernel.session import Session
    from core.units import Caller

    session = Session.open([folder])
    session.warm_up(Caller())
    # Steady state: a cold open's HDC encoders (core/store/pool.py) would otherwise share the
    # cores with the questions timed below.
    session.warm_up_hdc(Caller())
    rows = []
    if "reload_one_file" in ops:
        target = sorted(folder.glob("*.md"))[len(list(folder.glob("*.md"))) // 2]
        original = target.read_text(encoding="utf-8")

        def edit_and_reload(marker: list[int] = [0]) -> None:
            marker[0] += 1
            target.write_text(original.replace("Topic: ", f"Topic: edit{marker[0]} ", 1), encoding="utf-8")
            session.reload()
            session.indexes.for_view(session.view(Caller())).bm25

        times, peak = measure([edit_and_reload] * repeats(REPEATS))
        rows.append(row("mrptui", n, "reload_one_file", times, peak))
    if "bm25_parts_top10" in ops:
        # BM25 as the engine runs it on a KB read from files: one part per file, combined statistics.
        from core.text.tokenizer import tokenize

        index = session.indexes.for_view(session.view(Caller())).bm25
        queries = [tokenize(q) for q in SyntheticKb(n, query_count=repeats(200, 3)).queries]
        times, peak = measure([lambda q=q: index.top_k(q, (), 10) for q in queries])
        rows.append(row("mrptui-parts", n, "bm25_parts_top10", times, peak))
    if "ask_with_context" in ops:
        words = SyntheticKb(n).queries
        requests = [
            Request(question=f"The {words[i]} runs nightly. The {words[i + 1]} feeds it. What is {words[i + 2]}?")
            for i in range(0, 3 * repeats(10, 2), 3)
        ]
        list(session.run(Request(question=f"what is {words[0]}?")))
        times, peak = measure([lambda r=r: list(session.run(r)) for r in requests])
        rows.append(row("mrptui", n, "ask_with_context", times, peak))
    return rows


def _cli_ask_wall() -> dict:
    with tempfile.TemporaryDirectory(prefix="mrptui-cli-") as cache:
        env = {**os.environ, "MRPTUI_CACHE_DIR": cache}
        # A warm install has its bytecode cached (pip compiles site-packages; the first run
        # writes the project's): without it every call compiles the engine again (~0.2 s).
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        command = [sys.executable, "-m", "mrptui.cli", "ask", "What is Helix?"]
        if not smoke():  # a smoke run times nothing: its one ask proves the command runs
            subprocess.run(command, cwd=ROOT, env=env, capture_output=True, check=True)
        times = []
        for _ in range(repeats(5)):
            started = time.perf_counter()
            subprocess.run(command, cwd=ROOT, env=env, capture_output=True, check=True)
            times.append((time.perf_counter() - started) * 1000)
    return row("mrptui-sample-kb", 0, "cli_ask_wall", times, 0.0)


def _clear(cache: Path) -> None:
    import shutil

    shutil.rmtree(cache, ignore_errors=True)


def _child(op: str, folder: Path, cache: Path, n: int) -> dict:
    env = {**os.environ, "MRPTUI_CACHE_DIR": str(cache)}
    env.pop("MRPTUI_NO_CACHE", None)
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.store", "--child", op, str(folder), str(n)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _child_main(op: str, folder: str, n: int) -> None:
    # A question in the KB's own (synthetic) vocabulary, drawn before the clock starts.
    question = f"what is {SyntheticKb(n, query_count=1).queries[0]}?"
    started, cpu_before = time.perf_counter(), tree_cpu_ms()
    from core.kernel.contract import Request
    from core.kernel.events import AnswerReady
    from core.kernel.session import Session
    from core.units import Caller

    session = Session.open([Path(folder)])
    next(e for e in session.run(Request(question=question)) if isinstance(e, AnswerReady))
    ms = (time.perf_counter() - started) * 1000
    result = {
        "ms": ms,
        "cpu_ms": tree_cpu_ms() - cpu_before,
        "units": session.kb.unit_count,
        "first_answer_peak_mb": _peak_mb(),
    }
    if op == "cold_open":
        session.warm_up(Caller())
        session.warm_up_hdc(Caller())
        result["ready_ms"] = (time.perf_counter() - started) * 1000
    print(json.dumps({**result, "process_peak_mb": _peak_mb()}))


def tree_cpu_ms() -> float:
    """CPU time of this process and of its children, with what each child has reaped (a fork
    server's finished workers); processes still running below a child are not counted. Linux:
    elsewhere, this process's and its reaped children's."""
    own = os.times()
    total = own.user + own.system + own.children_user + own.children_system
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for pid in _children(os.getpid()):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # exited since it was listed: only a short-lived helper, not the fork server
        # utime, stime, cutime, cstime: fields 14-17 of proc(5), 12-15 after the name.
        total += sum(int(value) for value in fields[11:15]) / tick
    return total * 1000


def _children(pid: int) -> list[int]:
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return []
    found: list[int] = []
    for task in tasks:
        try:
            found += map(int, (task / "children").read_text().split())
        except OSError:
            continue
    return found


def _peak_mb() -> float:
    """This process's peak RSS. Linux carries ru_maxrss across fork and exec, so a child of a
    large benchmark process would report its parent's size: VmHWM belongs to this process alone."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 2**20


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        _child_main(sys.argv[2], sys.argv[3], int(sys.argv[4]))
