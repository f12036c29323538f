"""A KB file that stops being a readable file while a session has it open: replaced by a folder
or a named pipe, or made unreadable. A reload says so with the file's path, never hangs or
raises, and the file's units leave every caller's view (the rest of the KB stays)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
from pathlib import Path

import pytest

from core.infra.diagnostics import Code
from core.kernel.session import Session
from core.units import Caller
from tests.support.child_python import run_child

KILN = "## Context Unit kiln::chunk-001::unit-001\nRole: Definition\nTopic: bisque firing\nClaim: A bisque firing hardens raw clay before glazing.\n"
GLAZE = "## Context Unit glaze::chunk-001::unit-001\nRole: Diagnostic\nTopic: crawling glaze\nClaim: Glaze that crawls was laid over dust or oil.\n"


def pottery(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kiln.md").write_text(KILN, encoding="utf-8")
    (folder / "glaze.md").write_text(GLAZE, encoding="utf-8")
    return folder / "glaze.md"


def reload_within(session: Session, seconds: float = 20.0) -> list:
    """Reload in a thread: a reload that blocks (say, opening a pipe) fails the test, not hangs it."""
    result: list = []
    worker = threading.Thread(target=lambda: result.append(session.reload()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "reload did not finish"
    return result[0]


def ids(session: Session) -> set[str]:
    return {unit.id for unit in session.view(Caller()).units}


@pytest.mark.parametrize("replacement", ["folder", "named pipe"])
def test_a_file_replaced_during_a_session_leaves_the_view_with_a_diagnostic(tmp_path, config_path, replacement):
    glaze = pottery(tmp_path / "kb")
    session = Session.open([tmp_path / "kb"], config_path)
    assert ids(session) == {"kiln::chunk-001::unit-001", "glaze::chunk-001::unit-001"}
    glaze.unlink()
    if replacement == "folder":
        glaze.mkdir()
    else:
        os.mkfifo(glaze)
    diagnostics = reload_within(session)
    assert ids(session) == {"kiln::chunk-001::unit-001"}
    about = [d for d in diagnostics if d.file == str(glaze)]
    assert any(d.code is Code.FILE_UNREADABLE for d in about), about
    # The view still ranks: BM25 over what is left answers.
    assert session.indexes.for_view(session.view(Caller())).bm25.top_k(["bisqu"], (), 3)
    # The file comes back: its unit is read again.
    if replacement == "folder":
        glaze.rmdir()
    else:
        glaze.unlink()
    glaze.write_text(GLAZE, encoding="utf-8")
    reload_within(session)
    assert "glaze::chunk-001::unit-001" in ids(session)


_UNREADABLE_CHILD = """
import json, os, sys
from pathlib import Path
from core.kernel.session import Session
from core.units import Caller
kb = Path(sys.argv[1])
session = Session.open([kb])
os.chmod(kb / "glaze.md", 0)
if os.geteuid() == 0:  # root reads any file: drop to nobody for the reload
    os.setgid(65534)
    os.setuid(65534)
diagnostics = session.reload()
print(json.dumps({
    "ids": sorted(unit.id for unit in session.view(Caller()).units),
    "diagnostics": [[d.code.value, d.file, d.message] for d in diagnostics],
}))
"""


def test_a_file_made_unreadable_during_a_session_is_withdrawn_with_its_path():
    # A folder anyone may enter, so the reload can run as an unprivileged user under root.
    base = Path(tempfile.mkdtemp(prefix="mrptui-unreadable-"))
    try:
        base.chmod(0o755)
        glaze = pottery(base / "kb")
        (base / "kb").chmod(0o755)
        out = run_child(_UNREADABLE_CHILD, str(base / "kb"), MRPTUI_NO_CACHE="1")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["ids"] == ["kiln::chunk-001::unit-001"]
    about = {code for code, file, _ in result["diagnostics"] if file == str(glaze)}
    assert {"FILE_UNREADABLE", "UNITS_WITHDRAWN"} <= about, result["diagnostics"]
