"""`mrptui init` writes all its files or none: a write that fails (a file size limit standing in
for a full disk) or a process killed mid-write leaves nothing half-written where the user looks,
and a re-run then succeeds; an empty file left from before does not block it; a path that cannot
be a KB folder exits 2 with one line."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from mrptui.cli import main
from tests.support.child_python import run_child

FILES = 10
# Run init with a file size limit below the size of the copied config files.
_LIMITED = """
import resource, signal, sys
from mrptui.cli import main
# Ignored (Python's default), the write fails with EFBIG as on a full disk; else the signal kills.
signal.signal(signal.SIGXFSZ, signal.SIG_IGN if sys.argv[2] == "ignore" else signal.SIG_DFL)
resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))
sys.exit(main(["init", sys.argv[1]]))
"""


def limited_init(target: Path, on_limit: str) -> subprocess.CompletedProcess[str]:
    return run_child(_LIMITED, str(target), on_limit)


def visible(folder: Path) -> list[str]:
    paths = (p.relative_to(folder) for p in folder.rglob("*"))
    return sorted(p.as_posix() for p in paths if not any(part.startswith(".") for part in p.parts))


@pytest.mark.parametrize("existing", [False, True], ids=["new folder", "existing folder"])
def test_a_failed_write_leaves_nothing_and_says_so_in_one_line(tmp_path, existing):
    target = tmp_path / "shop"
    if existing:
        target.mkdir()
        (target / "notes.txt").write_text("mine", encoding="utf-8")
    done = limited_init(target, "ignore")
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "nothing was written" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == (["shop"] if existing else [])
    if existing:
        assert [p.name for p in target.iterdir()] == ["notes.txt"]
    assert main(["init", str(target)]) == 0
    assert len([p for p in target.rglob("*") if p.is_file()]) == FILES + existing


def test_an_init_killed_mid_write_leaves_no_half_written_file_and_a_re_run_succeeds(tmp_path):
    target = tmp_path / "shop"
    done = limited_init(target, "default")  # SIGXFSZ kills the process in the middle of a write
    assert done.returncode == -25, (done.returncode, done.stderr)
    assert visible(tmp_path) == []
    assert main(["init", str(target)]) == 0
    assert len(visible(target)) == FILES + 2  # and kb/, config/


def test_an_empty_readme_left_from_before_does_not_block_a_re_run(tmp_path, capsys):
    target = tmp_path / "shop"
    target.mkdir()
    (target / "README.md").touch()
    assert main(["init", str(target)]) == 0
    assert "mrptui knowledge base" in (target / "README.md").read_text(encoding="utf-8")


def test_a_readme_with_content_still_blocks_it(tmp_path, capsys):
    target = tmp_path / "shop"
    target.mkdir()
    (target / "README.md").write_text("my own", encoding="utf-8")
    assert main(["init", str(target)]) == 2
    assert (target / "README.md").read_text(encoding="utf-8") == "my own"
    assert [p.name for p in target.iterdir()] == ["README.md"]


@pytest.mark.parametrize("where", ["/proc/self", "/proc/self/shop", "file", "file/shop"])
def test_a_path_that_cannot_be_a_kb_folder_exits_2_with_one_line(tmp_path, where, capsys):
    (tmp_path / "file").write_text("x", encoding="utf-8")
    target = where if where.startswith("/") else str(tmp_path / where)
    capsys.readouterr()
    # In process: main's exit code and its stderr are what is checked (tests below keep real processes).
    assert main(["init", target]) == 2
    stderr = capsys.readouterr().err
    assert len(stderr.strip().splitlines()) == 1 and "internal error" not in stderr, stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


_AS_NOBODY = """
import os, sys
import mrptui.commands.init  # imported while the interpreter's files are readable
from mrptui.cli import main
if os.geteuid() == 0:  # root writes anywhere: drop to nobody
    os.setgid(65534)
    os.setuid(65534)
sys.exit(main(["init", sys.argv[1]]))
"""


def test_an_unwritable_folder_exits_2_with_one_line():
    base = Path(tempfile.mkdtemp(prefix="mrptui-init-"))
    try:
        base.chmod(0o555)
        done = run_child(_AS_NOBODY, str(base / "shop"))
        assert done.returncode == 2, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "Permission denied" in done.stderr, done.stderr
        assert list(base.iterdir()) == []
    finally:
        base.chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)
