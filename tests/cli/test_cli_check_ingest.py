from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from core.cnl import read_plaintext, read_text
from mrptui.cli import main

ROOT = Path(__file__).resolve().parent.parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "cnl"
GOOD = "## Context Unit g::chunk-000::unit-000\nRole: Explanation\nTopic: T\nClaim: C\n"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_check_clean_folder_exits_0_with_summary(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "kb").mkdir()
    (workdir / "kb" / "good.md").write_text(GOOD)
    (workdir / "kb" / "notes.txt").write_text("Orion uses Kafka. Atlas provides storage.\n")
    assert main(["check", "kb"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "kb/good.md: 1 unit",
        "kb/notes.txt: 2 units",
        "total: 3 units in 2 files, 0 errors, 0 warnings",
    ]


def test_check_prints_each_error_with_position_and_exits_1(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "broken.md").write_text((FIXTURES / "broken.md").read_text())
    assert main(["check", "broken.md"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("broken.md:7:7: INVALID_ROLE_VALUE invalid Role 'Wizard'")
    assert lines[1:] == ["broken.md: 2 units", "total: 2 units in 1 file, 1 error, 0 warnings"]


def test_warnings_alone_do_not_fail(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "odd.md").write_text(GOOD.replace("g::chunk-000::unit-000", "odd-id"))
    assert main(["check", "odd.md"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        "odd.md:1:17: warning: INVALID_ID_FORMAT id 'odd-id' does not follow <source>::chunk-NNN::unit-NNN"
    )


def test_check_missing_path_exits_2(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "nowhere"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "mrptui: error: no such file or directory: nowhere"


def test_check_validates_each_config_file_of_a_folder(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "config").mkdir()
    (workdir / "config" / "thinkingdb.json").write_text("{ not json")
    (workdir / "config" / "engine.json").write_text("{ also not json")
    assert main(["check", "config"]) == 1
    out = capsys.readouterr().out
    assert "config/thinkingdb.json:1:" in out and "INVALID_JSON" in out
    # engine.json is checked as the engine's config, never as a rules file.
    assert "config/engine.json: rules" not in out and "config/engine.json:1:3: INVALID_JSON" in out


def test_check_defaults_to_the_sample_kb_and_config(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["check"]) == 0
    out = capsys.readouterr().out
    assert "sample_kb/" in out and "config/thinkingdb.json: rules" in out
    assert out.splitlines()[-1].startswith("total: ")


def test_check_through_the_real_entry_point_never_shows_a_traceback(tmp_path: Path) -> None:
    binary = tmp_path / "blob.md"
    binary.write_bytes(b"\x00\x01\xff")
    done = subprocess.run(
        [sys.executable, "-m", "mrptui.cli", "check", str(binary), str(tmp_path / "missing")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    done = subprocess.run(
        [sys.executable, "-m", "mrptui.cli", "check", str(binary)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 1
    assert f"{binary}:1:1: BINARY_FILE" in done.stdout


def test_ingest_prints_markdown_that_reads_back_as_the_same_units(capsys: pytest.CaptureFixture[str]) -> None:
    source = FIXTURES / "notes.txt"
    assert main(["ingest", str(source)]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    again, diagnostics = read_text(captured.out, "ingested.md")
    expected, _ = read_plaintext(source.read_text(), str(source))
    assert diagnostics == []
    assert [u.model_dump(exclude={"location"}) for u in again] == [u.model_dump(exclude={"location"}) for u in expected]


@pytest.mark.parametrize(("name", "content"), [("missing.txt", None), ("blob.txt", b"\x00binary")])
def test_ingest_unreadable_file_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: bytes | None
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    assert main(["ingest", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"{path}:1:1: ")


@pytest.mark.parametrize(
    ("name", "content", "written"),
    [
        ("track.md", "## Context Unit t::chunk-000::unit-000\nRole: Definition\nTopic: T\nClaim: C.\n", "markdown"),
        ("signals.cnl", '@k1 ku atomic "s::chunk-000::unit-000"\n', "sop"),
        ("bulletins.jsonl", '{"_id": "b1", "title": "Heat", "text": "Rails expand."}\n', "jsonl"),
    ],
)
def test_ingest_refuses_a_file_of_authored_units_and_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: str, written: str
) -> None:
    path = tmp_path / name
    path.write_text(content)
    assert main(["ingest", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"{path} holds units in the {written} format already; ingest turns plain text into units" in captured.err
    assert "PERMISSION" not in captured.err


def test_ingest_reads_a_prose_markdown_file_as_plain_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prose = tmp_path / "notes.md"
    prose.write_text("# Pumps\n\nAda fixed the pump.\n")
    assert main(["ingest", str(prose)]) == 0
    assert "Claim: Ada fixed the pump." in capsys.readouterr().out


def test_ingest_reports_skipped_question_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    story = tmp_path / "story.txt"
    story.write_text(
        "Ada fixed the pump.\n\nQuestions \u2014 answer in one word:\nQ1: Who fixed the pump?\nQ2: What broke?\n"
    )
    assert main(["ingest", str(story)]) == 0
    out = capsys.readouterr().out
    assert "# skipped: 2 question lines" in out
    assert "Who fixed" not in out
    plain = tmp_path / "plain.txt"
    plain.write_text("Ada fixed the pump.\n")
    assert main(["ingest", str(plain)]) == 0
    assert "# skipped:" not in capsys.readouterr().out


def test_check_takes_kb_paths_as_every_other_command_does(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "kb").mkdir()
    (workdir / "kb" / "good.md").write_text(GOOD)
    (workdir / "broken.md").write_text((FIXTURES / "broken.md").read_text())
    assert main(["check", "--kb", "kb"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "total: 1 unit in 1 file, 0 errors, 0 warnings"
    # With positional paths as well, both are checked.
    assert main(["check", "broken.md", "--kb", "kb"]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == "total: 3 units in 2 files, 1 error, 0 warnings"
