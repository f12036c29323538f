"""The same questions on one process and on a local Dask cluster of 2 workers (issue 40): BM25
top-10 (`sharded_bm25`: two round trips a question, statistics then top-k) and `ask` end to end
(`sharded_ask`). Each sharded answer is checked against the one-process answer; a difference
fails the op. The shards are cut and opened before timing, as a running cluster would have them.

Each cluster row also says what docs/scale.md sizes from: p99, each shard's folder on disk (units
and index store), each worker's resident and peak memory, and the bytes a question's tasks and
answers take pickled (Dask's framing adds ~1–2 KB a task), counted in an untimed pass.

The `sharded_ask` cluster row adds the coordinator's peak memory: `mrptui ask Q --json --cluster`
as a user runs it, its own process on the same cluster, the KB written to disk as Markdown; once
cutting the shards and building the KB's index store (`coordinator_first_peak_mb`), once finding
both (`coordinator_peak_mb`). `coordinator_peaks` runs it from another checkout too (before/after)."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import BenchmarkFailed, measure, repeats, row
from benchmarks.memory import write_kb
from benchmarks.synthetic import SyntheticKb
from core.kb.knowledge_base import KnowledgeBase
from core.kb.sharding.cluster import Cluster
from core.kb.sharding.config import ClusterConfig
from core.kernel.contract import Request
from core.kernel.session import Session
from core.kernel.shard_session import shard_session
from core.kernel.summary import summarise
from core.text.tokenizer import tokenize
from core.units import ACT_PREFERRED_ROLES, Act, Caller

OPS = ("sharded_bm25", "sharded_ask")
WORKERS = 2
QUESTIONS = 30


def run(sizes: list[int], *, ops: set[str]) -> list[dict]:
    rows: list[dict] = []
    # Shard timeouts far above any question's time: a benchmark measures, it does not fail fast.
    # Building a shard's index store at 1M (500k units a worker) takes minutes on a loaded machine.
    with Cluster(f"local:{WORKERS}", ClusterConfig(shard_timeout_ms=120_000, connect_timeout_s=600)) as started:
        cluster = _Counted(started)
        for n in sizes:
            synthetic = SyntheticKb(n, query_count=repeats(QUESTIONS, 2))
            kb = KnowledgeBase.from_units(synthetic.units)
            single, spread = Session.from_kb(kb), Session.from_kb(kb)
            with tempfile.TemporaryDirectory(prefix="mrptui-bench-shards-") as root:
                shard_set = shard_session(spread, cluster, Path(root), WORKERS)  # type: ignore[arg-type]
                shards = {"shard_disk_mb": [round(_disk(Path(f)) / 2**20, 1) for f in shard_set.folders]}
                if "sharded_bm25" in ops:
                    rows += _bm25_rows(single, spread, synthetic.queries, n, cluster, shards)
                if "sharded_ask" in ops:
                    rows += _ask_rows(single, spread, synthetic.queries, n, cluster, shards)
                    rows[-1] |= coordinator_peaks(n, started.address, f"what is {synthetic.queries[0]}?")
    return rows


# The coordinator's own process: its peak RSS whatever way the command ends. VmHWM, which
# starts again at exec; not ru_maxrss, which Linux carries across fork and exec: a child started
# by a benchmark holding the 100k-unit KB it had just written reported that parent's ~330 MB.
_PEAK = (
    "import runpy, sys\n"
    "def _peak_kb():\n"
    "    return next(line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM'))\n"
    "sys.argv = ['mrptui', *sys.argv[1:]]\n"
    "try:\n    runpy.run_module('mrptui.cli', run_name='__main__')\n"
    "finally:\n    print(_peak_kb(), file=sys.stderr)\n"
)


def coordinator_peaks(n: int, address: str, question: str, source: Path | None = None) -> dict[str, float]:
    """The peak MB of `mrptui ask QUESTION --json --cluster ADDRESS` on an `n`-unit Markdown KB,
    run from `source` (default: this checkout): first cutting the shards and building the KB's
    index store, then finding both."""
    from core.infra.resources import config_dir

    source = source or Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory(prefix="mrptui-bench-coordinator-") as temp:
        root = Path(temp)
        (root / "kb").mkdir()
        write_kb(n, root / "kb")
        shutil.copytree(config_dir(), root / "config")
        # Shards of 500k units take minutes to build on a loaded machine: wait, do not fail.
        (root / "config" / "cluster.json").write_text(
            json.dumps({"shardTimeoutMs": 600_000, "connectTimeoutS": 600}), encoding="utf-8"
        )
        command = [sys.executable, "-c", _PEAK, "ask", question, "--kb", str(root / "kb"), "--json"]
        command += ["--config", str(root / "config"), "--cluster", address, "--shard-dir", str(root / "shards")]
        env = {**os.environ, "MRPTUI_CACHE_DIR": str(root / "cache")}
        peaks = []
        # A smoke run, which measures nothing, asks once: the coordinator that finds the shards
        # already cut is test_sharded_search's (its questions share one --shard-dir).
        for _ in range(repeats(2)):
            done = subprocess.run(command, cwd=source, env=env, capture_output=True, text=True, timeout=3_600)
            if done.returncode != 0:
                raise BenchmarkFailed("sharded_ask", f"the coordinator failed: {done.stderr[-500:]}", [])
            peaks.append(round(int(done.stderr.strip().splitlines()[-1]) / 1024, 1))
    return {"coordinator_first_peak_mb": peaks[0], "coordinator_peak_mb": peaks[-1]}


class _Counted:
    """The cluster, counting the pickled bytes of each task's arguments and answer while `on`."""

    def __init__(self, cluster: Cluster):
        self._cluster = cluster
        self.on = False
        self.bytes = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cluster, name)

    def each_shard(self, task: Any, shards: Any, *args: Any, **kwargs: Any) -> list[Any]:
        answers = self._cluster.each_shard(task, shards, *args, **kwargs)
        if self.on:
            sent = len(pickle.dumps((task, args)))
            self.bytes += sum(sent + len(pickle.dumps((shard, answer))) for shard, answer in zip(shards, answers))
        return answers

    def per_question(self, calls: Sequence[Callable[[], object]]) -> int:
        """Bytes a question's tasks and answers take, averaged over `calls` (untimed)."""
        self.on, self.bytes = True, 0
        for call in calls:
            call()
        self.on = False
        return round(self.bytes / max(len(calls), 1))

    def workers_mb(self) -> dict[str, list[float]]:
        """Each worker's resident and peak memory (MB): the shards it holds open."""
        status = [_status(pid) for pid in self._cluster.worker_pids().values()]
        return {"worker_rss_mb": [s["VmRSS"] for s in status], "worker_peak_mb": [s["VmHWM"] for s in status]}


def _status(pid: int) -> dict[str, float]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    fields = dict(line.split(":", 1) for line in lines if line.startswith("Vm"))
    return {k: round(int(v.split()[0]) / 1024, 1) for k, v in fields.items()}


def _disk(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _cluster_row(base: dict, times: list[float], cluster: _Counted, shards: dict, calls: Sequence) -> dict:
    return {
        **base,
        "p99_ms": round(float(np.percentile(times, 99)), 3),
        **shards,
        **cluster.workers_mb(),
        "bytes_per_question": cluster.per_question(calls),
    }


def _bm25_rows(
    single: Session, spread: Session, queries: list[str], n: int, cluster: _Counted, shards: dict
) -> list[dict]:
    roles = ACT_PREFERRED_ROLES[Act.DEFINE]
    terms = [tokenize(q) for q in queries]

    def calls_of(session: Session, found: list) -> list[Callable[[], object]]:
        index = session.indexes.for_view(session.view(Caller())).bm25
        index.top_k(terms[0], roles, 10)  # builds (or opens) the index before timing
        return [partial(_top10, index, t, roles, found) for t in terms]

    differs = "the shards' top 10 differs from one process's"
    return _paired_rows("sharded_bm25", differs, calls_of, single, spread, n, cluster, shards)


def _ask_rows(
    single: Session, spread: Session, queries: list[str], n: int, cluster: _Counted, shards: dict
) -> list[dict]:
    requests = [Request(question=f"what is {q}?") for q in queries]

    def calls_of(session: Session, found: list) -> list[Callable[[], object]]:
        list(session.run(requests[0]))
        return [partial(_ask, session, r, found) for r in requests]

    differs = "an answer on the shards differs from one process's"
    return _paired_rows("sharded_ask", differs, calls_of, single, spread, n, cluster, shards)


def _paired_rows(
    op: str,
    differs: str,
    calls_of: Callable[[Session, list], list[Callable[[], object]]],
    single: Session,
    spread: Session,
    n: int,
    cluster: _Counted,
    shards: dict,
) -> list[dict]:
    """`op` timed in one process, then on the shards: `calls_of(session, found)` warms the session
    up (untimed) and gives the calls, each appending what it found; both must find the same."""
    rows, answers = [], []
    for engine, session in (("mrptui", single), (f"mrptui-{WORKERS}-workers", spread)):
        found: list = []
        calls = calls_of(session, found)
        times, peak = measure(calls)
        answers.append(found[: len(calls)])
        measured = row(engine, n, op, times, peak)
        rows.append(_cluster_row(measured, times, cluster, shards, calls[:5]) if session is spread else measured)
    if answers[0] != answers[1]:
        raise BenchmarkFailed(op, differs, rows)
    return rows


def _top10(index: Any, terms: list[str], roles: Any, found: list) -> None:
    found.append([u for u, _ in index.top_k(terms, roles, 10)])


def _ask(session: Session, request: Request, found: list) -> None:
    found.append(_answer(session, request))


def _answer(session: Session, request: Request) -> tuple:
    summary = summarise(list(session.run(request)))
    return summary["answer"], summary["status"], [(e["id"], round(e["score"], 9)) for e in summary["evidence"]]
