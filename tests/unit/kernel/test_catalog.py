"""Plugins come from `config/engine.json`: a user adds one by naming its factory there."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from core.kernel.contract import Request
from core.kernel.session import Session
from mrptui.cli import main

PLUGIN_MODULE = """
from core.kernel.contract import Descriptor, GoalSolver, GsResult, PluginType, Status


class Echo(GoalSolver):
    descriptor = Descriptor(id="gs-echo", type=PluginType.GS, name="echo", description="repeats the evidence ids")

    def solve(self, ctx, intent, evidence):
        ids = evidence.evidence_ids
        return GsResult(status=Status.SUCCESS, answer="echo " + " ".join(f"[{i}]" for i in ids), cited_ids=ids)


def make(services):
    return Echo()
"""


def _config_with(tmp_path: Path, config_path: Path, extra: list[str]) -> Path:
    config = tmp_path / "config"
    shutil.copytree(config_path, config)
    engine = json.loads((config / "engine.json").read_text())
    engine["plugins"] += extra
    (config / "engine.json").write_text(json.dumps(engine))
    return config


def test_a_plugin_named_in_the_config_joins_the_registry_and_can_be_pinned(tmp_path, config_path, monkeypatch) -> None:
    (tmp_path / "my_plugins.py").write_text(PLUGIN_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    config = _config_with(tmp_path, config_path, ["my_plugins:make"])
    session = Session.open(None, config)
    assert "gs-echo" in session.plugin_ids()["gs"]
    events = list(session.run(Request(question="What is Helix?", pins={"gs": "gs-echo"})))
    assert events[-2].answer.startswith("echo [")
    sys.modules.pop("my_plugins", None)


def test_a_bad_plugin_reference_is_a_diagnostic_and_the_rest_still_load(tmp_path, config_path) -> None:
    config = _config_with(tmp_path, config_path, ["no_such_module:make", "core.plugins.seed"])
    session = Session.open(None, config)
    problems = [d for d in session.diagnostics() if d.code.value == "INVALID_CONFIG"]
    assert [d.file for d in problems] == [str(config / "engine.json")] * 2
    assert "no_such_module" in problems[0].message and "not of the form module:factory" in problems[1].message
    assert "sd-symbolic" in session.plugin_ids()["sd"]


def test_a_misspelt_plugin_id_in_a_planner_order_is_an_error_at_its_line_with_a_hint(tmp_path, config_path) -> None:
    config = tmp_path / "config"
    shutil.copytree(config_path, config)
    engine = (config / "engine.json").read_text()
    (config / "engine.json").write_text(engine.replace('"kb-thinkingdb"', '"kb-thinkingdbb"', 1))
    session = Session.open(None, config)
    [problem] = [d for d in session.diagnostics() if "kb-thinkingdbb" in d.message]
    assert problem.message == (
        "planners.planner-default.kb names 'kb-thinkingdbb', which no loaded plugin has; "
        "did you mean 'kb-thinkingdb'?; it is skipped"
    )
    assert problem.is_error
    assert '"kb-thinkingdbb"' in (config / "engine.json").read_text().splitlines()[problem.line - 1]
    assert session.health().plugin_errors == 1
    assert "kb-thinkingdb" in session.plugin_ids()["kb"]
    assert main(["check", str(config)]) == 1


def test_check_fails_on_a_plugin_id_of_another_stage_in_a_planner_order(tmp_path, config_path, capsys) -> None:
    config = tmp_path / "config"
    shutil.copytree(config_path, config)
    engine = (config / "engine.json").read_text()
    (config / "engine.json").write_text(engine.replace('"sd-llm-deep"', '"kb-fast"', 1))
    assert main(["check", str(config)]) == 1
    out = capsys.readouterr().out
    line = engine.splitlines().index('        "sd-llm-deep"') + 1
    assert f"engine.json:{line}:9: INVALID_CONFIG planners.planner-default.sd names 'kb-fast', a kb" in out
