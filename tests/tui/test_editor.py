"""The editor command: each known editor's line syntax, the $MRPTUI_EDITOR template, and errors."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import pytest
from conftest import make_app
from helpers import record_notifications

from mrptui.editor import EditorError, editor_command, editor_name

FILE = "/kb/my notes/it's.md"  # a space and a quote: must stay one argument


@pytest.mark.parametrize(
    ("editor", "argv"),
    [
        ("vim", ["vim", "+12", FILE]),
        ("nvim", ["nvim", "+12", FILE]),
        ("vi", ["vi", "+12", FILE]),
        ("nano", ["nano", "+12", FILE]),
        ("emacs -nw", ["emacs", "-nw", "+12", FILE]),
        ("emacsclient -t", ["emacsclient", "-t", "+12", FILE]),
        ("micro", ["micro", "+12", FILE]),
        ("kak", ["kak", "+12", FILE]),
        ("code --wait", ["code", "--wait", "-g", f"{FILE}:12"]),
        ("codium", ["codium", "-g", f"{FILE}:12"]),
        ("subl -w", ["subl", "-w", f"{FILE}:12"]),
        ("hx", ["hx", f"{FILE}:12"]),
        ("zed --wait", ["zed", "--wait", f"{FILE}:12"]),
        ("idea", ["idea", "--line", "12", FILE]),
        ("mate -w", ["mate", "-w", "-l", "12", FILE]),
        ("/usr/bin/vim.basic", ["/usr/bin/vim.basic", "+12", FILE]),
        ("'/opt/My Editors/hx'", ["/opt/My Editors/hx", f"{FILE}:12"]),
    ],
)
def test_each_known_editor_gets_its_own_line_syntax(editor: str, argv: list[str]):
    assert editor_command(FILE, 12, {"EDITOR": editor}).argv == argv


def test_visual_wins_over_editor_and_the_template_over_both():
    env = {"EDITOR": "vim", "VISUAL": "hx"}
    assert editor_command(FILE, 3, env).argv == ["hx", f"{FILE}:3"]
    env["MRPTUI_EDITOR"] = "myeditor --goto {file}:{line} --line={line}"
    assert editor_command(FILE, 3, env).argv == ["myeditor", "--goto", f"{FILE}:3", "--line=3"]


def test_a_template_without_file_gets_the_file_last_and_braces_can_be_written():
    env = {"MRPTUI_EDITOR": "'my editor' -c 'goto {{{line}}}'"}
    assert editor_command(FILE, 7, env).argv == ["my editor", "-c", "goto {7}", FILE]


def test_an_unknown_editor_opens_the_file_without_a_line_and_says_how_to_pass_one():
    command = editor_command(FILE, 12, {"EDITOR": "ed"})
    assert command.argv == ["ed", FILE]  # never "+12", which ed would open as a second file
    assert "MRPTUI_EDITOR" in command.note and "ed {file}:{line}" in command.note


def test_a_file_name_that_looks_like_an_option_is_passed_as_a_path():
    assert editor_command("-rf.md", 2, {"EDITOR": "vim"}).argv == ["vim", "+2", "./-rf.md"]


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({}, "set $EDITOR"),
        ({"EDITOR": "  "}, "set $EDITOR"),
        ({"MRPTUI_EDITOR": "ed {path}"}, "unknown placeholder in '{path}'"),
        ({"MRPTUI_EDITOR": "ed {line!r}"}, "unknown placeholder"),
        ({"MRPTUI_EDITOR": "ed {file.__class__}"}, "unknown placeholder"),
        ({"MRPTUI_EDITOR": "ed {"}, "literal braces"),
        ({"MRPTUI_EDITOR": "'ed {file}"}, "$MRPTUI_EDITOR cannot be split into words"),
        ({"EDITOR": "'vim"}, "$EDITOR cannot be split into words"),
    ],
)
def test_unusable_settings_are_errors_that_name_the_variable(env: dict[str, str], message: str):
    with pytest.raises(EditorError) as caught:
        editor_command(FILE, 1, env)
    assert message in str(caught.value)


def test_editor_names_ignore_paths_suffixes_and_case():
    assert [editor_name(p) for p in ("/usr/bin/nvim", "C:/Apps/Code.exe", "vim.tiny", "subl")] == [
        "nvim",
        "code",
        "vim",
        "subl",
    ]


async def test_e_runs_the_templated_editor_as_an_argv_and_reports_an_unknown_one(tmp_path: Path, monkeypatch):
    """The KB screen's `e` runs a real program: the argv arrives whole (no shell in between)."""
    record = tmp_path / "argv.txt"
    script = tmp_path / "fake editor.py"
    script.write_text(f"import sys\nopen({str(record)!r}, 'w').write('\\n'.join(sys.argv[1:]))\n")
    monkeypatch.setenv("MRPTUI_EDITOR", f"'{sys.executable}' '{script}' --goto {{file}}:{{line}}")
    app = make_app()
    app.suspend = contextlib.nullcontext  # type: ignore[method-assign] - the headless driver cannot suspend
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("escape", "k", "down", "e")
        assert record.read_text().splitlines() == ["--goto", "sample_kb/ops.md:12"]
        notes = record_notifications(app)
        monkeypatch.delenv("MRPTUI_EDITOR")
        monkeypatch.setenv("EDITOR", f"'{sys.executable}' '{script}'")
        await pilot.press("e")
        assert record.read_text().splitlines() == ["sample_kb/ops.md"]
        assert any("line syntax is not known" in n for n in notes)
