"""Issue 40 in the explorer: a KB searched on the shards of a local Dask cluster of 2 worker
processes. The evidence table names each unit's shard, an attempt's detail the ms of each shard,
the status line the cluster; a shard that does not answer is named in the attempt rows and the
answer pane. 4 shards on 2 workers: shards 1 and 3 on one, 2 and 4 on the other. One cluster for the module (starting one costs seconds), handed to each app as
`--cluster local:2` would give it (tests/tui/test_cluster_start.py starts one from the flags).
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from conftest import make_app
from helpers import ask, settle, until

from core.kb.sharding.config import ClusterConfig
from mrptui.cluster_link import ClusterLink
from mrptui.explorer_session import ExplorerSession
from mrptui.widgets.evidence import EvidenceTable
from mrptui.widgets.timeline import AttemptsTimeline, row_detail

pytest.importorskip("distributed")

from core.kb.sharding.cluster import Cluster  # noqa: E402 - needs distributed

SIZE = (120, 40)
QUESTION = "what uses python"
SHARDS = 4


@pytest.fixture(scope="module")
def cluster():
    with Cluster("local:2", ClusterConfig(shard_timeout_ms=20_000)) as started:
        yield started


@pytest.fixture(scope="module")
def shard_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("shards")


def sharded_app(cluster: Cluster, shard_root: Path, **kwargs):
    """The explorer on sample_kb, opened in its load worker and sharded on the module's cluster,
    labelled as `mrptui --cluster local:2 --shards 2` labels it."""
    link = ClusterLink(ClusterConfig(address="local:2", shards=SHARDS), shard_root, connect=lambda: cluster)
    return make_app(opener=lambda progress: ExplorerSession.open(progress=progress), cluster=link, **kwargs)


async def ready(pilot) -> None:
    """Until the KB is open and sharded on the cluster, and its warm-up is done."""
    app = pilot.app
    await until(pilot, lambda: app.kb_state.phase == "ready" and app.kb_state.cluster.endswith("shards"), 120)
    await settle(pilot)


def status_text(app) -> str:
    return str(app.screen.query_one("#status").content)


async def test_the_evidence_names_each_units_shard_and_the_status_line_the_cluster(cluster, shard_root) -> None:
    app = sharded_app(cluster, shard_root, show_durations=True)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert "cluster local:2 · 4 shards" in status_text(app)
        await ask(pilot, QUESTION)
        table = app.screen.query_one(EvidenceTable)
        assert [label for label, _ in table.drawn_columns][3] == "sh"
        scored = table.current
        assert scored is not None and scored.shards == SHARDS
        assert {c.shard for c in scored.candidates} <= {1, 2, 3, 4} and all(c.shard for c in scored.candidates)
        # The table shows each row's shard, as its candidate names it.
        shown = [table.cells(row)[3] for row in range(table.row_count)]
        assert [str(getattr(cell, "plain", cell)).strip() for cell in shown] == [str(c.shard) for c in table._shown]
        # The kb attempt's detail: each shard's ms on a worker.
        timeline = app.screen.query_one(AttemptsTimeline)
        kb_row = next(r for r in app.state.attempts if r.stage == "kb" and r.status == "success")
        assert [s.shard for s in kb_row.shards] == [1, 2, 3, 4]
        assert all(s.answered and s.of == SHARDS and s.ms > 0 for s in kb_row.shards)
        detail = row_detail(kb_row, show_durations=timeline.show_durations)
        assert f"shard 1 of 4: {kb_row.shards[0].ms:.1f} ms" in detail and "shard 4 of 4:" in detail
        assert "did not answer" not in str(app.screen.query_one("#answer-text").content)


def test_sharded_main_screen(snap_compare, cluster, shard_root) -> None:
    async def run_before(pilot) -> None:
        await ready(pilot)
        await ask(pilot, QUESTION)

    assert snap_compare(sharded_app(cluster, shard_root), terminal_size=SIZE, run_before=run_before)


def test_a_silent_shard_is_named_in_the_attempts_and_the_answer(snap_compare, cluster, shard_root) -> None:
    """The worker of shards 1 and 3 stopped (SIGSTOP): every kb attempt is an error naming them,
    the answer pane says the answer is incomplete without them."""
    first = cluster.workers()[0]  # shard i goes to worker i mod 2 (sorted): shards 1 and 3 to this one
    pid = cluster.worker_pids()[first]
    saved = cluster.config
    app = sharded_app(cluster, shard_root)

    async def run_before(pilot) -> None:
        await ready(pilot)
        cluster.config = ClusterConfig(shard_timeout_ms=1_500, retry_after_ms=600_000)
        os.kill(pid, signal.SIGSTOP)
        await ask(pilot, QUESTION)
        kb = [r for r in app.state.attempts if r.stage == "kb" and r.status != "skipped"]
        assert kb and all(r.status == "error" and "shard 1 of 4 did not answer" in r.reason for r in kb)
        assert all([s.shard for s in r.shards if not s.answered] == [1, 3] for r in kb)
        answer = str(app.screen.query_one("#answer-text").content)
        assert "shards 1, 3 of 4 did not answer: the answer is incomplete" in answer
        # The timeline (two plan revisions: it scrolls) laid out again at its last row, so the
        # snapshot does not depend on where the run's event batches left its widths and scroll.
        timeline = app.screen.query_one(AttemptsTimeline)
        for _ in range(2):  # the second time with the scrollbars the first one settled
            timeline._rebuild(follow=True)
            await settle(pilot)

    try:
        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
    finally:
        os.kill(pid, signal.SIGCONT)
        cluster.config = saved
        cluster._down = None
