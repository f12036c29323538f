"""A view's lazy index build is not charged to the plugin that happens to ask first: under a
plugin timeout shorter than the build, the first retrieve still succeeds, and its attempt says
how long the build took and that it was not charged. The request's own deadline still holds."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from benchmarks.synthetic import SyntheticKb
from core.infra.cancel import CancelToken
from core.kb.knowledge_base import KnowledgeBase
from core.kernel.contract import Request
from core.kernel.events import AttemptFinished
from core.kernel.session import Session

# Touches the view's BM25 index and answers: all its time is the index build.
TOUCH_PLUGIN = """
from core.kernel.contract import Descriptor, KbResult, KnowledgePlugin, PluginType, Status


class Touch(KnowledgePlugin):
    descriptor = Descriptor(id="kb-touch", type=PluginType.KB, name="touch", description="builds BM25")

    def __init__(self, services):
        self.services = services

    def retrieve(self, ctx, intent):
        self.services.indexes.for_view(ctx.view).bm25
        return KbResult(status=Status.INSUFFICIENT, reason="touched")


def make(services):
    return Touch(services)
"""


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    """Built in memory once: each session over it builds its BM25 index from the units when first
    asked (0.3-1.5 s for 5,000 units: six to thirty times the plugin timeout below). The files of a
    20,000-unit KB, read afresh in every test, had cost far more than the build the tests are about."""
    return KnowledgeBase.from_units(SyntheticKb(5_000).units)


def session_with_touch(tmp_path: Path, config_path: Path, kb: KnowledgeBase, monkeypatch, **budgets) -> Session:
    (tmp_path / "touch_plugin.py").write_text(TOUCH_PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    config = tmp_path / "config"
    shutil.copytree(config_path, config)
    engine = json.loads((config / "engine.json").read_text())
    engine["plugins"].append("touch_plugin:make")
    engine["budgets"].update(budgets)
    (config / "engine.json").write_text(json.dumps(engine))
    return Session.from_kb(kb, config)


def touch_attempt(session: Session) -> AttemptFinished:
    events = list(session.run(Request(question="What is vubamu?", pins={"kb": "kb-touch"})))
    return next(e for e in events if isinstance(e, AttemptFinished) and e.plugin == "kb-touch")


def test_the_first_retrieve_of_a_view_is_not_timed_out_by_its_index_build(tmp_path, config_path, kb, monkeypatch):
    session = session_with_touch(tmp_path, config_path, kb, monkeypatch, pluginTimeoutMs=50)
    attempt = touch_attempt(session)
    assert (attempt.status, attempt.reason) == ("insufficient", "touched"), attempt
    assert attempt.uncharged.startswith("bm25 index build: ") and "not charged to pluginTimeoutMs" in attempt.uncharged
    assert attempt.ms > 50
    # Built once: the next question's attempt has nothing uncharged.
    assert touch_attempt(session).uncharged == ""


def test_the_request_deadline_still_stops_a_build(tmp_path, config_path, kb, monkeypatch):
    session = session_with_touch(tmp_path, config_path, kb, monkeypatch, pluginTimeoutMs=20, requestTimeoutMs=40)
    attempt = touch_attempt(session)
    assert attempt.status == "error" and "requestTimeoutMs" in attempt.reason, attempt


def test_a_paused_token_keeps_its_remaining_time_and_obeys_its_hard_deadline():
    token = CancelToken(time.monotonic() + 0.05, "pluginTimeoutMs", time.monotonic() + 5, "requestTimeoutMs")
    with token.paused("a build"):
        time.sleep(0.1)
        assert not token.cancelled
    assert not token.cancelled and 0.03 < token.remaining() <= 0.05
    assert token.paused_for == ["a build"] and token.paused_s >= 0.1
    hard = CancelToken(time.monotonic() + 10, "pluginTimeoutMs", time.monotonic() + 0.05, "requestTimeoutMs")
    with hard.paused("a build"):
        time.sleep(0.1)
        assert hard.cancelled and hard.reason == "requestTimeoutMs passed"
