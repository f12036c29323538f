"""`mrptui init DIR` makes a KB that passes check and eval; `--config DIR` works on every command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mrptui.cli import SUBCOMMANDS, build_parser, main


def test_init_creates_a_kb_that_passes_check_and_eval(tmp_path: Path, capsys) -> None:
    target = tmp_path / "shop"
    assert main(["init", str(target)]) == 0
    files = sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file())
    assert files == [
        "README.md",
        "config/engine.json",
        "config/llm.json",
        "config/retrieval.json",
        "config/thinkingdb.json",
        "documents.jsonl",
        "kb/touring.txt",
        "kb/workshop-procedures.cnl",
        "kb/workshop.md",
        "queries.json",
    ]
    capsys.readouterr()
    kb, config, queries = str(target / "kb"), str(target / "config"), str(target / "queries.json")
    jsonl = str(target / "documents.jsonl")  # one example per format: JSON Lines is read when named
    assert main(["check", kb, jsonl, config, "--against", queries]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "total: 4 units in 8 files, 0 errors, 0 warnings"
    assert main(["eval", queries, "--kb", kb, "--kb", jsonl, "--config", config, "--strict", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["safe"] and report["answers"][0]["failures"] == {}
    assert report["diagnostics"]["rules_running"] == 1


def test_init_refuses_to_overwrite_and_writes_nothing(tmp_path: Path, capsys) -> None:
    target = tmp_path / "shop"
    (target / "kb").mkdir(parents=True)
    (target / "kb" / "workshop.md").write_text("my own notes", encoding="utf-8")
    assert main(["init", str(target)]) == 2
    assert "refusing to overwrite existing files" in capsys.readouterr().err
    assert (target / "kb" / "workshop.md").read_text(encoding="utf-8") == "my own notes"
    assert sorted(p.name for p in target.rglob("*")) == ["kb", "workshop.md"]


def test_init_on_a_file_is_a_usage_error(tmp_path: Path, capsys) -> None:
    (tmp_path / "f").write_text("x")
    assert main(["init", str(tmp_path / "f")]) == 2


@pytest.mark.parametrize("command", sorted(set(SUBCOMMANDS) - {"init", "ingest", "cache"}))
def test_every_session_command_takes_config_before_or_after_the_command(command: str) -> None:
    parser = build_parser()
    positional = {
        "ask": ["q"],
        "retrieve": ["q"],
        "eval": ["queries.json"],
        "replay": ["t.jsonl"],
        "check": [],
        "memory": ["list"],
    }[command]
    assert parser.parse_args([command, *positional, "--config", "cfg"]).config == "cfg"
    assert parser.parse_args(["--config", "cfg", command, *positional]).config == "cfg"
    assert parser.parse_args(["--config", "cfg"]).config == "cfg"


def test_an_option_value_that_names_a_command_is_not_taken_for_the_command() -> None:
    # Subcommand arguments are added when argparse reaches the command's word (mrptui/cli.py).
    args = build_parser().parse_args(["--kb", "ask", "--config", "check", "retrieve", "q", "--kb-plugin", "kb-fast"])
    assert (args.command, args.kb, args.config, args.question, args.kb_plugin) == (
        "retrieve",
        ["ask"],
        "check",
        "q",
        "kb-fast",
    )
    assert build_parser().parse_args(["--kb", "eval"]).command is None


def test_config_must_be_a_folder(tmp_path: Path, capsys) -> None:
    assert main(["ask", "What is Orion?", "--config", str(tmp_path / "nope")]) == 2
    assert "--config must be a folder" in capsys.readouterr().err


def test_eval_sample_works_and_names_the_bundled_queries(capsys, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # outside a checkout: no sample_kb/ here
    assert main(["eval", "--sample", "--kb-plugin", "kb-fast"]) == 0
    assert "## Safety gates" in capsys.readouterr().out
    assert main(["eval", "sample_kb/queries.json", "--kb-plugin", "kb-fast"]) == 0
    capsys.readouterr()
    assert main(["eval"]) == 2
    assert "--sample" in capsys.readouterr().err


def test_queries_errors_print_one_per_line_with_file_and_line(tmp_path: Path, capsys) -> None:
    path = tmp_path / "q.json"
    path.write_text(
        json.dumps([{"id": "a", "question": "x"}, {"id": "b", "question": "y", "expect_evidence": []}], indent=2),
        encoding="utf-8",
    )
    assert main(["eval", str(path)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 3
    assert all(line.startswith(f"mrptui: error: {path}:") for line in lines)
    assert any("must_not_appear: Field required" in line for line in lines)
