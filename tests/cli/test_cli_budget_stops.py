"""A budget that stopped ThinkingDB's closure is said where the answer is shown: `ask`'s text and
`--json`, `retrieve`'s table and `eval`'s report per query; an engine budget that stopped or
refused a call is named beside it on `ask`'s path line. A trace that cannot be written never
costs the answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.infra.resources import config_file
from core.infra.safe_io import UnsafePath
from mrptui.cli import main

QUESTION = "Is A relevant for D?"
STOP = "kb-thinkingdb stopped deriving at maxDerivedFacts=1"


@pytest.fixture
def chain(tmp_path: Path) -> list[str]:
    """A three-step chain the bundled rules prove, under rules that may derive one fact."""
    kb, config = tmp_path / "kb", tmp_path / "config"
    kb.mkdir()
    config.mkdir()
    (kb / "facts.txt").write_text("A uses B. B provides C. C is relevant for D.\n", encoding="utf-8")
    rules = json.loads(config_file(None, "thinkingdb.json").read_text(encoding="utf-8"))
    rules.setdefault("limits", {})["maxDerivedFacts"] = 1
    (config / "thinkingdb.json").write_text(json.dumps(rules), encoding="utf-8")
    return ["--cache-dir", str(tmp_path / "cache"), "--kb", str(kb), "--config", str(config)]


def test_ask_names_the_budget_that_stopped_the_closure_in_text_and_json(chain, capsys) -> None:
    assert main([*chain, "ask", QUESTION]) == 0
    out = capsys.readouterr().out
    assert f"budget: {STOP}; the answer may be incomplete" in out.splitlines()
    assert main([*chain, "ask", QUESTION, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["budget_stops"] == [STOP]


def test_retrieve_names_the_budget_beside_the_candidates(chain, capsys) -> None:
    assert main([*chain, "retrieve", QUESTION, "--kb-plugin", "kb-thinkingdb"]) == 0
    assert f"budget: {STOP}; the candidates may be incomplete" in capsys.readouterr().out.splitlines()


def test_ask_says_nothing_of_budgets_when_none_stopped_the_closure(tmp_path, capsys) -> None:
    # The bundled maxDepth stops this chain's closure too: it is the rules' reach, not a budget.
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "facts.txt").write_text("A uses B. B provides C. C is relevant for D.\n", encoding="utf-8")
    assert main(["--cache-dir", str(tmp_path / "cache"), "--kb", str(kb), "ask", QUESTION, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["budget_stops"] == []


def test_eval_reports_the_budget_stop_per_query(chain, tmp_path, capsys) -> None:
    queries = tmp_path / "queries.json"
    queries.write_text(
        json.dumps([{"id": "q1", "question": QUESTION, "expect_evidence": [], "must_not_appear": []}]), encoding="utf-8"
    )
    main([*chain, "eval", str(queries), "--kb-plugin", "kb-thinkingdb", "--json"])
    assert [q["budget_stops"] for q in json.loads(capsys.readouterr().out)["queries"]] == [[STOP]]
    main([*chain, "eval", str(queries), "--kb-plugin", "kb-thinkingdb"])
    assert f"- q1 (weighted): {STOP}" in capsys.readouterr().out


def test_a_trace_that_cannot_be_written_still_prints_the_answer_then_the_error(
    chain, tmp_path, monkeypatch, capsys
) -> None:
    def full_disk(events, path, protected=None) -> None:
        raise UnsafePath(path, "could not write: No space left on device")

    monkeypatch.setattr("mrptui.commands.ask.write_trace", full_disk)
    trace = tmp_path / "run.jsonl"
    assert main([*chain, "ask", QUESTION, "--trace", str(trace)]) == 2
    out, err = capsys.readouterr()
    assert out.startswith("Yes, because") and "status: grounded" in out
    assert f"mrptui: error: --trace {trace}: could not write: No space left on device" in err


def _config_with(tmp_path: Path, **files: dict) -> Path:
    """The bundled config folder with some keys of some files replaced (`engine={"budgets": …}`)."""
    config = tmp_path / "config"
    config.mkdir(exist_ok=True)
    for name in ("engine", "retrieval", "llm", "thinkingdb"):
        data = json.loads(config_file(None, f"{name}.json").read_text(encoding="utf-8"))
        data.update(files.get(name, {}))
        (config / f"{name}.json").write_text(json.dumps(data), encoding="utf-8")
    return config


def test_ask_names_the_llm_call_budget_on_its_path_line(tmp_path, capsys) -> None:
    # An endpoint that is never called: the budget refuses the call first.
    config = _config_with(
        tmp_path, engine={"budgets": {"maxLlmCallsPerRequest": 0}}, llm={"baseUrl": "http://127.0.0.1:9"}
    )
    options = ["--cache-dir", str(tmp_path / "cache"), "--config", str(config)]
    assert main([*options, "ask", "What is Helix?", "--gs", "gs-llm-fast"]) == 0
    path = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("path: "))
    assert "→ gs-llm-fast unsupported [LLM call budget exhausted (budgets.maxLlmCallsPerRequest)] →" in path


def test_a_reason_that_names_no_budget_stays_off_the_path_line(tmp_path, capsys) -> None:
    options = ["--cache-dir", str(tmp_path / "cache")]  # the bundled llm.json names no endpoint
    assert main([*options, "ask", "What is Helix?", "--gs", "gs-llm-fast"]) == 0
    path = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("path: "))
    assert "→ gs-llm-fast unsupported →" in path
