"""KB paths the loader cannot use as they are: a file or folder name that is not UTF-8, a folder
that cannot be listed, a file that cannot be read. Each is a diagnostic naming the path (escaped
where it is not text), the rest of the KB loads, no command exits 3, and a live session's reload
neither raises nor keeps serving the units of a file it can no longer read."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from core.infra.diagnostics import Code
from core.kb.knowledge_base import KnowledgeBase
from core.kernel.session import Session
from core.store import SegmentStore
from core.units import Caller
from tests.support.child_python import run_child

ROOT = Path(__file__).resolve().parents[2]
KILN = "## Context Unit kiln::chunk-001::unit-001\nRole: Definition\nTopic: bisque firing\nClaim: A bisque firing hardens raw clay before glazing.\n"
GLAZE = "## Context Unit glaze::chunk-001::unit-001\nRole: Diagnostic\nTopic: crawling glaze\nClaim: Glaze that crawls was laid over dust or oil.\n"
SLIP = "## Context Unit slip::chunk-001::unit-001\nRole: Definition\nTopic: slip\nClaim: Slip is clay thinned with water to join pieces.\n"
BAD_FILE = os.fsdecode(b"gl\xffze.md")
BAD_FOLDER = os.fsdecode(b"sl\xfep")


def pottery(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kiln.md").write_text(KILN, encoding="utf-8")
    (folder / BAD_FILE).write_text(GLAZE, encoding="utf-8")
    (folder / BAD_FOLDER).mkdir()
    (folder / BAD_FOLDER / "slip.md").write_text(SLIP, encoding="utf-8")
    return folder


def mrptui(*argv: str, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MRPTUI_CACHE_DIR": str(cache)}
    env.pop("MRPTUI_NO_CACHE", None)
    return subprocess.run(
        [sys.executable, "-m", "mrptui.cli", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        stdin=subprocess.DEVNULL,
        cwd=ROOT,
        errors="replace",
    )


def test_a_name_that_is_not_utf8_is_a_diagnostic_with_the_name_escaped_and_the_rest_loads(tmp_path):
    kb = pottery(tmp_path / "kb")
    loaded = KnowledgeBase.load([kb], SegmentStore(tmp_path / "cache"))
    assert {unit.id for unit in loaded.units} == {"kiln::chunk-001::unit-001"}
    named = {d.file: d for d in loaded.diagnostics if d.code is Code.FILE_UNREADABLE}
    assert set(named) == {str(kb) + "/gl\\xffze.md", str(kb) + "/sl\\xfep"}, named
    assert all("UTF-8" in d.message for d in named.values())


@pytest.mark.parametrize("command", [["check"], ["ask", "what does a bisque firing do"], ["retrieve", "bisque"]])
def test_no_command_exits_3_on_a_name_that_is_not_utf8(tmp_path, command):
    kb = pottery(tmp_path / "kb")
    out = mrptui("--kb", str(kb), *command, cache=tmp_path / "cache")
    assert out.returncode in (0, 1), out.stderr
    assert "internal error" not in out.stderr and "Traceback" not in out.stderr
    if command == ["check"]:
        assert "gl\\xffze.md" in out.stdout + out.stderr


def test_a_name_that_is_not_utf8_named_with_kb_is_a_diagnostic(tmp_path):
    kb = pottery(tmp_path / "kb")
    out = mrptui("--kb", str(kb / BAD_FILE), "check", cache=tmp_path / "cache")
    assert out.returncode == 1 and "internal error" not in out.stderr, out.stderr
    assert "gl\\xffze.md" in out.stdout


def test_reload_after_a_rename_to_a_name_that_is_not_utf8_withdraws_the_file(tmp_path, config_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "kiln.md").write_text(KILN, encoding="utf-8")
    (kb / "glaze.md").write_text(GLAZE, encoding="utf-8")
    session = Session.open([kb], config_path)
    assert {u.id for u in session.view(Caller()).units} == {"kiln::chunk-001::unit-001", "glaze::chunk-001::unit-001"}
    (kb / "glaze.md").rename(kb / BAD_FILE)
    diagnostics = session.reload()
    assert {u.id for u in session.view(Caller()).units} == {"kiln::chunk-001::unit-001"}
    assert any(d.file.endswith("gl\\xffze.md") for d in diagnostics)


_UNREADABLE_CHILD = """
import json, os, sys
from pathlib import Path
import core.store.pool  # imported while the interpreter's files are readable (a first load imports it)
from core.kb.knowledge_base import KnowledgeBase
from core.kernel.session import Session
from core.units import Caller
kb = Path(sys.argv[1])
def report(diagnostics, session):
    return {
        "ids": sorted(unit.id for unit in session.view(Caller()).units),
        "diagnostics": [[d.code.value, d.file, d.message] for d in diagnostics],
    }
if os.geteuid() == 0:
    # nobody cannot read this interpreter's files (under /root): a load and a reload as root
    # first import every module they import on demand.
    Session.open([kb]).reload()
    os.setgid(65534)
    os.setuid(65534)
session = Session.open([kb])
before = sorted(unit.id for unit in session.view(Caller()).units)
os.chmod(kb / "glazes", 0)
os.chmod(kb / "kiln.md", 0)
reloaded = report(session.reload(), session)
fresh = Session.open([kb])
opened = report(fresh.diagnostics(), fresh)
print(json.dumps({"before": before, "reloaded": reloaded, "opened": opened}))
"""


def test_an_unreadable_folder_or_file_is_a_diagnostic_at_open_and_reload():
    # The session runs as nobody (root reads anything), in a folder nobody owns.
    base = Path(tempfile.mkdtemp(prefix="mrptui-unreadable-"))
    try:
        base.chmod(0o755)
        kb = base / "kb"
        (kb / "glazes").mkdir(parents=True)
        (kb / "kiln.md").write_text(KILN, encoding="utf-8")
        (kb / "slip.md").write_text(SLIP, encoding="utf-8")
        (kb / "glazes" / "glaze.md").write_text(GLAZE, encoding="utf-8")
        for path in (kb, kb / "glazes", kb / "kiln.md", kb / "slip.md", kb / "glazes" / "glaze.md"):
            if os.geteuid() == 0:
                os.chown(path, 65534, 65534)
        out = run_child(_UNREADABLE_CHILD, str(kb), MRPTUI_NO_CACHE="1")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["before"] == ["glaze::chunk-001::unit-001", "kiln::chunk-001::unit-001", "slip::chunk-001::unit-001"]
    for run in ("reloaded", "opened"):
        assert result[run]["ids"] == ["slip::chunk-001::unit-001"], result[run]
        about = {file: code for code, file, _ in result[run]["diagnostics"]}
        assert about.get(str(kb / "glazes")) == "FILE_UNREADABLE", result[run]
        assert about.get(str(kb / "kiln.md")) in ("FILE_UNREADABLE", "UNITS_WITHDRAWN"), result[run]


_BEHIND_A_LOCKED_FOLDER = """
import os, sys
from mrptui.cli import main
import mrptui.commands.check, mrptui.commands.ask, mrptui.commands.replay, core.kernel.session  # while readable
import locale  # argparse's gettext imports it on first use
if os.geteuid() == 0:
    os.setgid(65534)
    os.setuid(65534)
kb = sys.argv[1]
codes = [main(["check", kb]), main(["ask", "--kb", kb, "What is a bisque?"]), main(["replay", kb + "/run.jsonl"])]
print(codes)
"""


@pytest.mark.skipif(
    os.geteuid() != 0, reason="a folder its owner cannot search needs another user: root drops to nobody"
)
def test_a_path_behind_a_folder_that_cannot_be_searched_is_exit_2_with_one_line_not_an_internal_error():
    base = Path(tempfile.mkdtemp(prefix="mrptui-locked-"))
    try:
        base.chmod(0o700)  # nobody may not search it
        (base / "kb").mkdir()
        (base / "kb" / "kiln.md").write_text(KILN, encoding="utf-8")
        done = run_child(_BEHIND_A_LOCKED_FOLDER, str(base / "kb"), MRPTUI_NO_CACHE="1")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    assert done.stdout.strip() == "[2, 2, 2]", done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 3 and all("Permission denied" in line for line in lines), lines
    assert "internal error" not in done.stderr
