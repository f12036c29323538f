"""kb plugins called outside a run (why-not, eval, `mrptui retrieve`) get the run's pluginTimeoutMs:
a stuck plugin is an error naming the budget, never a command that hangs."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from core.kernel.calls import retrieve_bounded
from core.kernel.contract import Descriptor, KnowledgePlugin, PluginType, Request, RunContext, Status
from core.units import Act, Intent
from tests.support.engine_config import cli_process as _cli
from tests.support.engine_config import edited_config as _config

INTENT = Intent(act=Act.DEFINE, target="what is a bilge pump?", output="text")

STUCK_PLUGIN = """
import threading
from core.kernel.contract import Descriptor, KnowledgePlugin, PluginType


class Stuck(KnowledgePlugin):
    descriptor = Descriptor(id="kb-stuck", type=PluginType.KB, name="stuck", description="never answers")

    def retrieve(self, ctx, intent):
        threading.Event().wait(600)


def make(services):
    return Stuck()
"""


class Polling(KnowledgePlugin):
    descriptor = Descriptor(id="kb-polling", type=PluginType.KB, name="polling", description="spins, polls its token")

    def __init__(self) -> None:
        self.stopped = threading.Event()

    def retrieve(self, ctx, intent):
        try:
            while True:
                ctx.cancel.raise_if_cancelled()
                time.sleep(0.005)
        finally:
            self.stopped.set()


class Raising(KnowledgePlugin):
    descriptor = Descriptor(id="kb-raising", type=PluginType.KB, name="raising", description="raises")

    def retrieve(self, ctx, intent):
        raise ValueError("index missing")


def _ctx() -> RunContext:
    return RunContext(request=Request(question=INTENT.target), view=None, services=None)


def test_a_plugin_past_its_timeout_is_an_error_naming_the_budget_and_stops() -> None:
    plugin = Polling()
    result = retrieve_bounded(plugin, _ctx(), INTENT, 100)
    assert result.status is Status.ERROR and result.outcome is None
    assert result.reason.startswith("cancelled:") and "pluginTimeoutMs" in result.reason
    assert plugin.stopped.wait(5)


def test_a_raising_plugin_is_an_error_naming_the_exception() -> None:
    result = retrieve_bounded(Raising(), _ctx(), INTENT, 1000)
    assert (result.status, result.reason) == (Status.ERROR, "raised ValueError: index missing")


def _stuck_config(tmp_path: Path, config_path: Path) -> dict[str, str]:
    (tmp_path / "stuck_plugin.py").write_text(STUCK_PLUGIN)
    engine = json.loads((config_path / "engine.json").read_text())
    _config(tmp_path, config_path, {"plugins": [*engine["plugins"], "stuck_plugin:make"]})
    config = _config(tmp_path, config_path, {"budgets.pluginTimeoutMs": 300})
    return {"PYTHONPATH": f"{tmp_path}:{Path(__file__).resolve().parents[3]}", "MRPTUI_CONFIG": str(config)}


def test_retrieve_with_a_stuck_plugin_exits_1_with_one_line(tmp_path, config_path) -> None:
    done = _cli("retrieve", "What is Helix?", "--kb-plugin", "kb-stuck", env_extra=_stuck_config(tmp_path, config_path))
    assert done.returncode == 1 and "Traceback" not in done.stderr and done.stdout == ""
    assert "kb-stuck error: cancelled: timed out after 300 ms (pluginTimeoutMs)" in done.stderr


def test_why_not_names_the_stuck_plugin_and_still_explains_the_others(tmp_path, config_path) -> None:
    env = _stuck_config(tmp_path, config_path)
    done = _cli(
        "retrieve", "What is Helix?", "--why-not", "helix-storage::chunk-000::unit-000", "--json", env_extra=env
    )
    assert done.returncode == 0, done.stderr
    reasons = json.loads(done.stdout)["reasons"]
    assert reasons["kb-stuck"] == "error: cancelled: timed out after 300 ms (pluginTimeoutMs)"
    assert reasons["kb-balanced"] and not reasons["kb-balanced"].startswith("error")


def test_eval_records_the_stuck_plugin_as_an_error_and_scores_the_rest(tmp_path, config_path) -> None:
    env = _stuck_config(tmp_path, config_path)
    queries = tmp_path / "queries.json"
    queries.write_text(
        json.dumps(
            [
                {
                    "id": "q1",
                    "question": "What is Helix?",
                    "expect_evidence": ["helix-storage::chunk-000::unit-000"],
                    "must_not_appear": [],
                }
            ]
        )
    )
    done = _cli(
        "eval",
        str(queries),
        "--kb-plugin",
        "kb-stuck",
        "--kb-plugin",
        "kb-balanced",
        "--fusion",
        "weighted",
        "--json",
        env_extra=env,
    )
    assert done.returncode == 0, done.stderr
    runs = {r["plugin"]: r for r in json.loads(done.stdout)["queries"][0]["retrieval"]}
    assert runs["kb-stuck"]["error"] == "cancelled: timed out after 300 ms (pluginTimeoutMs)"
    assert runs["kb-balanced"]["error"] == "" and runs["kb-balanced"]["recall_at_k"] == 1.0
