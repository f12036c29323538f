"""A KB past a whole-KB budget (`inputs.maxKbUnits`, ... in retrieval.json) is refused by every
command with one line naming the budget, where it is set and the file that passed it: `ask` and
`eval` exit 2, `check` lists it as an error (exit 1); never a traceback, never an answer from part
of the KB. An author with a larger KB raises the budget in the config folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.infra.resources import config_dir
from mrptui.cli import main
from tests.support.engine_config import edited_config
from tests.support.store_kb import write_kb


def config_with(root: Path, **inputs: int) -> Path:
    """`root/config`: the bundled config folder with `inputs` in retrieval.json, as an author sets it."""
    return edited_config(root, config_dir(), {"inputs": inputs}, "retrieval.json")


@pytest.fixture
def kb(tmp_path: Path) -> tuple[list[str], list[Path]]:
    files = write_kb(tmp_path / "kb", files=3, per_file=10)
    config = config_with(tmp_path, maxKbUnits=25)
    return ["--cache-dir", str(tmp_path / "cache"), "--config", str(config), "--kb", str(tmp_path / "kb")], files


def refused_at(file: Path) -> str:
    return f"{file}:1:1: KB_TOO_LARGE the KB holds more than 25 units (inputs.maxKbUnits in retrieval.json)"


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_ask_refuses_the_kb_naming_the_budget(kb, capsys, json_flag) -> None:
    options, files = kb
    assert main([*options, "ask", "when is the neap tide", *json_flag]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"mrptui: error: {refused_at(files[2])}") and "Traceback" not in err


def test_eval_refuses_the_kb_before_any_question(kb, tmp_path, capsys) -> None:
    options, files = kb
    queries = tmp_path / "queries.json"
    queries.write_text(
        json.dumps([{"id": "q1", "question": "neap tide", "expect_evidence": [], "must_not_appear": []}]),
        encoding="utf-8",
    )
    assert main([*options, "eval", str(queries), "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and refused_at(files[2]) in err


def test_check_lists_the_refusal_as_an_error(kb, tmp_path, capsys, monkeypatch) -> None:
    options, files = kb
    monkeypatch.chdir(tmp_path)
    assert main([*options[:4], "check", "kb"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"{refused_at(Path('kb') / files[2].name)}, counted up to this file; it is not opened: "
        "open a part of it (fewer folders or files) or raise the budget"
    ]


def test_check_opens_the_kb_under_the_budgets_of_a_config_folder_it_checks(kb, tmp_path, capsys, monkeypatch) -> None:
    options, files = kb
    monkeypatch.chdir(tmp_path)
    config_with(tmp_path / "roomy", maxKbUnits=30)
    assert main([*options[:2], "check", "kb", "roomy/config"]) == 0, capsys.readouterr().out
    assert "KB_TOO_LARGE" not in capsys.readouterr().out


def test_a_raised_budget_opens_the_kb(kb, tmp_path, capsys) -> None:
    options, _ = kb
    options[3] = str(config_with(tmp_path / "roomy", maxKbUnits=30))
    assert main([*options, "ask", "when is the neap tide", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["answer"]


def test_a_budget_out_of_its_range_is_a_config_error_at_its_line(kb, tmp_path, capsys) -> None:
    options, _ = kb
    options[3] = str(config_with(tmp_path / "zero", maxKbUnits=0))
    assert main([*options, "ask", "when is the neap tide"]) == 2
    err = capsys.readouterr().err
    assert "retrieval.json:" in err and "inputs.maxKbUnits" in err and "Traceback" not in err
