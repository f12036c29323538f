"""Diagnostics travel with every answer: stderr summary, `diagnostics` in JSON, `--strict`, and a
running session that keeps the last good rules (whole file or one rule) when an edit breaks them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.kernel.session import Session
from mrptui.cli import main

# A small greenhouse KB of our own: a two-hop chain that only rules can join.
UNITS = """## Context Unit glass::chunk-000::unit-000
Role: Explanation
Topic: Mister and humidity
Claim: The mister raises humidity.
Subject: mister
Relation: causes
Object: humidity

## Context Unit glass::chunk-000::unit-001
Role: Explanation
Topic: Humidity and orchids
Claim: Humidity is relevant for orchid health.
Subject: humidity
Relation: relevant_for
Object: orchid health
"""

BAD_UNIT = """
## Context Unit glass::chunk-001::unit-000
Role: Definitoin
Topic: Fern
Claim: A fern is a plant without flowers.
"""

RULES = {
    "rules": [
        {
            "id": "cause_chain",
            "when": [{"s": "?a", "r": "causes", "o": "?b"}, {"s": "?b", "r": "relevant_for", "o": "?c"}],
            "then": {"s": "?a", "r": "relevant_for", "o": "?c"},
            "weight": 0.9,
        },
        {
            "id": "use_chain",
            "when": [{"s": "?a", "r": "uses", "o": "?b"}, {"s": "?b", "r": "causes", "o": "?c"}],
            "then": {"s": "?a", "r": "causes", "o": "?c"},
            "weight": 0.8,
        },
    ]
}


@pytest.fixture
def workspace(tmp_path: Path, config_path: Path) -> tuple[Path, Path]:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "glass.md").write_text(UNITS, encoding="utf-8")
    config = tmp_path / "config"
    shutil.copytree(config_path, config)
    (config / "thinkingdb.json").write_text(json.dumps(RULES, indent=2), encoding="utf-8")
    return kb, config


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


QUESTION = "Why is the mister relevant for orchid health?"


def test_a_clean_workspace_prints_no_warning_and_reports_zero_errors(workspace, capsys) -> None:
    kb, config = workspace
    code, out, err = _cli(capsys, "ask", QUESTION, "--kb", str(kb), "--config", str(config), "--json", "--strict")
    assert code == 0 and err == ""
    diagnostics = json.loads(out)["diagnostics"]
    assert diagnostics["errors"] == 0 and diagnostics["rules_running"] == diagnostics["rules_declared"] == 2


def test_a_broken_rules_file_at_start_warns_on_stderr_and_strict_exits_1(workspace, capsys) -> None:
    kb, config = workspace
    (config / "thinkingdb.json").write_text('{"rules": [ {"id": "cause_chain",', encoding="utf-8")
    code, out, err = _cli(capsys, "ask", QUESTION, "--kb", str(kb), "--config", str(config))
    assert code == 0 and out
    assert err.splitlines() == ["mrptui: warning: rules file invalid: running with 0 rules — mrptui check for details"]
    code, _, err = _cli(capsys, "ask", QUESTION, "--kb", str(kb), "--config", str(config), "--strict")
    assert code == 1 and "rules file invalid" in err


def test_kb_and_rule_errors_are_counted_in_every_json_output(workspace, capsys) -> None:
    kb, config = workspace
    (kb / "glass.md").write_text(UNITS + BAD_UNIT, encoding="utf-8")
    rules = json.loads(json.dumps(RULES))
    rules["rules"][1]["weight"] = 7
    (config / "thinkingdb.json").write_text(json.dumps(rules, indent=2), encoding="utf-8")
    expected = "1 KB error, 1 rule error: running with 1 of 2 rules — mrptui check for details"
    for argv in (["ask", QUESTION, "--json"], ["retrieve", QUESTION, "--json"]):
        code, out, err = _cli(capsys, *argv, "--kb", str(kb), "--config", str(config))
        assert code == 0
        assert err.strip() == f"mrptui: warning: {expected}"
        diagnostics = json.loads(out)["diagnostics"]
        assert (diagnostics["kb_errors"], diagnostics["rules_errors"], diagnostics["rules_running"]) == (1, 1, 1)
        assert diagnostics["summary"] == expected


def test_eval_json_carries_diagnostics_and_strict_fails_on_them(workspace, tmp_path, capsys) -> None:
    kb, config = workspace
    (kb / "glass.md").write_text(UNITS + BAD_UNIT, encoding="utf-8")
    queries = tmp_path / "queries.json"
    queries.write_text(
        json.dumps(
            [
                {
                    "id": "g1",
                    "question": QUESTION,
                    "expect_evidence": ["glass::chunk-000::unit-001"],
                    "must_not_appear": [],
                }
            ]
        ),
        encoding="utf-8",
    )
    base = ["eval", str(queries), "--kb", str(kb), "--config", str(config), "--kb-plugin", "kb-fast"]
    code, out, err = _cli(capsys, *base, "--json")
    assert code == 0 and "1 KB error" in err
    assert json.loads(out)["diagnostics"]["kb_errors"] == 1
    code, _, _ = _cli(capsys, *base, "--strict")
    assert code == 1


def test_a_running_session_keeps_the_last_good_rules_when_the_file_breaks(workspace) -> None:
    kb, config = workspace
    session = Session.open([kb], config)
    (config / "thinkingdb.json").write_text("{ not json", encoding="utf-8")
    session.reload()
    health = session.health()
    assert [r["id"] for r in session.rules()] == ["cause_chain", "use_chain"]
    assert not health.rules_file_valid and health.rules_running == 2
    assert "running with 2 rules (the last good ones)" in health.summary
    assert any(d.code.value == "RULES_LAST_GOOD_KEPT" for d in session.diagnostics())


def test_one_rule_whose_edit_breaks_keeps_its_last_good_version_and_is_named(workspace) -> None:
    kb, config = workspace
    session = Session.open([kb], config)
    rules = json.loads(json.dumps(RULES))
    rules["rules"][0]["then"] = {"s": "?a", "r": "relevant_for", "o": "?unbound"}
    rules["rules"][1]["weight"] = 0.5
    (config / "thinkingdb.json").write_text(json.dumps(rules, indent=2), encoding="utf-8")
    session.reload()
    by_id = {rule.id: rule for rule in session.ruleset.rules}
    assert set(by_id) == {"cause_chain", "use_chain"}
    assert by_id["cause_chain"].then.o == "?c"  # the last good version
    assert by_id["use_chain"].weight == 0.5  # the valid edit is taken
    notes = [d.message for d in session.diagnostics() if d.code.value == "RULES_LAST_GOOD_KEPT"]
    assert notes == ["rule cause_chain: invalid edit, last good version kept"]
    # Still answered through the kept rule.
    assert "cause_chain" in json.dumps([e.model_dump(mode="json") for e in session.run(_request())])


def test_a_rule_never_valid_is_not_resurrected(workspace) -> None:
    kb, config = workspace
    rules = json.loads(json.dumps(RULES))
    rules["rules"][1]["weight"] = 7
    (config / "thinkingdb.json").write_text(json.dumps(rules, indent=2), encoding="utf-8")
    session = Session.open([kb], config)
    session.reload()
    assert [r.id for r in session.ruleset.rules] == ["cause_chain"]


def _request():
    from core.kernel.contract import Request

    return Request(question=QUESTION, pins={"kb": "kb-thinkingdb"})
