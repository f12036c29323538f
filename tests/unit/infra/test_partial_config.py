"""A config folder holds only the files its author changes: engine.json, retrieval.json and
thinkingdb.json it lacks come from the bundled config, and `check` says which (docs/decisions.md)."""

from __future__ import annotations

import json
from pathlib import Path

from core.infra.resources import config_file
from core.kernel.session import Session
from mrptui.cli import main
from tests.unit.infra.test_diagnostics_travel import QUESTION, RULES, UNITS


def _kb(tmp_path: Path) -> Path:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "glass.md").write_text(UNITS, encoding="utf-8")
    return kb


def _rules_only(tmp_path: Path) -> Path:
    config = tmp_path / "config"
    config.mkdir()
    (config / "thinkingdb.json").write_text(json.dumps(RULES), encoding="utf-8")
    return config


def test_a_folder_with_only_its_rules_answers_through_them(tmp_path, capsys) -> None:
    kb, config = _kb(tmp_path), _rules_only(tmp_path)
    code = main(["ask", QUESTION, "--kb", str(kb), "--config", str(config), "--json", "--strict"])
    out, err = capsys.readouterr()
    assert code == 0 and err == "", err
    result = json.loads(out)
    assert result["status"] == "grounded" and result["diagnostics"]["errors"] == 0
    assert "cause_chain" in out  # the folder's own rule proved it, on the bundled engine settings


def test_check_names_what_a_folder_leaves_to_the_bundled_config(tmp_path, capsys) -> None:
    config = _rules_only(tmp_path)
    assert main(["check", str(config)]) == 0
    out = capsys.readouterr().out
    assert f"{config}: engine.json, retrieval.json from the bundled config" in out
    assert "thinkingdb.json from" not in out


def test_a_folder_without_rules_runs_the_bundled_ones_until_it_has_its_own(tmp_path, config_path) -> None:
    kb, config = _kb(tmp_path), tmp_path / "config"
    config.mkdir()
    (config / "retrieval.json").write_text((config_path / "retrieval.json").read_text(), encoding="utf-8")
    session = Session.open([kb], config)
    bundled = {rule["id"] for rule in session.rules()}
    assert "cause_chain" not in bundled and {r["file"] for r in session.rules()} == {
        str(config_path / "thinkingdb.json")
    }
    (config / "thinkingdb.json").write_text(json.dumps(RULES), encoding="utf-8")
    session.reload()
    assert [r["id"] for r in session.rules()] == ["cause_chain", "use_chain"]
    # Once the folder has had rules, deleting them mid-edit keeps the last good ones, never the bundled.
    (config / "thinkingdb.json").unlink()
    session.reload()
    assert [r["id"] for r in session.rules()] == ["cause_chain", "use_chain"]
    assert any(d.code.value == "RULES_LAST_GOOD_KEPT" for d in session.diagnostics())


def test_a_missing_file_comes_from_the_bundled_config_not_from_the_environment(tmp_path, monkeypatch) -> None:
    partial = tmp_path / "env-config"
    partial.mkdir()
    (partial / "engine.json").write_text("{}", encoding="utf-8")
    monkeypatch.setenv("MRPTUI_CONFIG", str(partial))
    assert config_file(None, "engine.json") == partial / "engine.json"
    assert config_file(None, "retrieval.json").parent != partial and config_file(None, "retrieval.json").is_file()
    # Optional files keep their own default (their model's) and are never looked up elsewhere.
    assert config_file(partial, "llm.json") == partial / "llm.json"
