"""Plugin work that would run away stops: a call that makes the process grow past
`budgets.maxRequestMemoryMb` is cancelled with that budget named, a timed-out shipped plugin
working through a huge unit stops at its token (tokenising polls it), and once a run has
returned no plugin thread of it is still running."""

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from core.infra.cancel import current
from core.infra.config import Budgets
from core.kernel.contract import KbResult, Request, Status
from core.kernel.events import AttemptFinished
from core.kernel.session import Session
from tests.support.scripted_engine import GOOD, engine_with, run_to_end

GOOD_EVIDENCE = GOOD["kb"]().outcome


def grower() -> KbResult:
    """Keeps 8 MB more every step, polling its token: a retrieval whose memory has no bound."""
    kept = []
    while True:
        current().raise_if_cancelled()
        kept.append(np.ones(1 << 20))
        time.sleep(0.002)


def test_a_call_that_grows_past_the_memory_budget_is_cancelled_naming_it():
    engine = engine_with({"kb": grower}, timeout_ms=60_000)
    engine.config = engine.config.model_copy(
        update={"budgets": Budgets(max_request_memory_mb=64, plugin_timeout_ms=60_000)}
    )
    started = time.monotonic()
    events = run_to_end(engine)
    attempt = next(e for e in events if isinstance(e, AttemptFinished) and e.plugin == "kb-bad")
    assert attempt.status == "error" and attempt.reason.startswith("cancelled: maxRequestMemoryMb (64 MB) passed"), (
        attempt
    )
    assert events[-2].status == "grounded"  # the next kb plugin answered
    assert time.monotonic() - started < 30


def paused_grower() -> KbResult:
    """Grows 160 MB inside a pause (what a view's index build does), then answers."""
    with current().paused("an index build"):
        kept = [np.ones(1 << 20) for _ in range(20)]
    return KbResult(status=Status.SUCCESS, reason=f"built {len(kept)} blocks", outcome=GOOD_EVIDENCE)


def test_growth_while_paused_is_not_charged_to_the_memory_budget():
    engine = engine_with({"kb": paused_grower}, timeout_ms=60_000)
    engine.config = engine.config.model_copy(
        update={"budgets": Budgets(max_request_memory_mb=64, plugin_timeout_ms=60_000)}
    )
    events = run_to_end(engine)
    attempt = next(e for e in events if isinstance(e, AttemptFinished) and e.plugin == "kb-bad")
    assert (attempt.status, attempt.reason) == ("success", "built 20 blocks"), attempt


def test_the_memory_budget_is_ranged():
    assert Budgets(max_request_memory_mb=512).max_request_memory_mb == 512
    with pytest.raises(ValueError, match="max_request_memory_mb|maxRequestMemoryMb"):
        Budgets(max_request_memory_mb=10**6)


def plugin_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name.startswith("plugin-") and thread.is_alive()]


@pytest.fixture(scope="module")
def huge_kb(tmp_path_factory) -> Path:
    kb = tmp_path_factory.mktemp("huge") / "kb"
    kb.mkdir()
    rng = np.random.default_rng(5)
    words = [f"{a}{b}" for a in "bcdfgklmnprstvz" for b in "aeiou"]
    claim = " ".join(words[i] for i in rng.integers(0, len(words), size=600_000))
    (kb / "huge.md").write_text(
        f"## Context Unit huge::chunk-000::unit-000\nRole: Explanation\nTopic: one huge unit\nClaim: {claim}.\n",
        encoding="utf-8",
    )
    return kb


def test_no_plugin_thread_outlives_a_run_whose_plugins_timed_out_on_a_huge_unit(
    tmp_path, config_path, huge_kb, monkeypatch
):
    monkeypatch.setenv("MRPTUI_NO_CACHE", "1")
    config = tmp_path / "config"
    shutil.copytree(config_path, config)
    engine = json.loads((config / "engine.json").read_text())
    engine["budgets"]["pluginTimeoutMs"] = 50
    (config / "engine.json").write_text(json.dumps(engine))
    session = Session.open([huge_kb], config)
    # A test before this one in the process may have left a plugin that ignores its token asleep
    # past its timeout (test_engine's timeout case, ~1 s): it is not this run's.
    for thread in plugin_threads():
        thread.join(10)
    assert plugin_threads() == []
    events = list(session.run(Request(question="How do I fix ba?")))
    timed_out = [e for e in events if isinstance(e, AttemptFinished) and "pluginTimeoutMs" in e.reason]
    assert timed_out, [(e.plugin, e.status, e.reason) for e in events if isinstance(e, AttemptFinished)]
    assert plugin_threads() == []
