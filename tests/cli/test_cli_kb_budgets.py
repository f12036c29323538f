"""A KB past a whole-KB budget (`inputs.maxKbUnits`, ...) is refused by every command with one
line naming the budget and the file that passed it: `ask` and `eval` exit 2, `check` lists it
as an error (exit 1); never a traceback, never an answer from part of the KB."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cnl import caps as caps_module
from core.cnl.caps import InputCaps
from mrptui.cli import main
from tests.support.store_kb import write_kb


@pytest.fixture
def kb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[Path]]:
    files = write_kb(tmp_path / "kb", files=3, per_file=10)
    monkeypatch.setattr(caps_module, "CAPS", InputCaps(max_kb_units=25))
    return ["--cache-dir", str(tmp_path / "cache"), "--kb", str(tmp_path / "kb")], files


def refused_at(file: Path) -> str:
    return f"{file}:1:1: KB_TOO_LARGE the KB holds more than 25 units (inputs.maxKbUnits)"


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
    assert main([options[0], options[1], "check", "kb"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"{refused_at(Path('kb') / files[2].name)}, counted up to this file; it is not opened: "
        "open a part of it (fewer folders or files)"
    ]
