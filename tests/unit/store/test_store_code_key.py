"""A cached segment is served only to the reader code that built it.

Segments hold units and their permission columns as the readers read them. A cache built by other
reader code (an older mrptui that published a unit whose permission field it did not read, which
today's readers withdraw) must never be served: every module that decides what a segment holds is
in its key. The key's file list used to be written by hand and missed `core/text/sentences.py` (where
plain-text sentences end) and, once the BM25 fields moved, `core/retrieval/bm25/fields.py`.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core.store.store import shaping_files

ROOT = Path(__file__).resolve().parents[3]
READERS = ("core.cnl.source", "core.cnl.jsonl", "core.retrieval.bm25.fields")


def _run(code: str, path: Path = ROOT) -> str:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=path,
        env={"PYTHONPATH": str(path), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_every_core_module_the_readers_load_is_in_the_segment_key() -> None:
    loaded = _run(
        "import sys\n"
        + "".join(f"import {name}\n" for name in READERS)
        + "print('\\n'.join(m.__file__ for n, m in sys.modules.items() if n.split('.')[0] == 'core' and getattr(m, '__file__', None)))"
    ).split()
    covered = {path.resolve() for path in shaping_files()}
    assert {Path(file).resolve() for file in loaded} - covered == set()


DIGEST = "from core.store.store import code_digest; print(code_digest())"


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One copy of `core` for the module, and its key: the copy compiles its bytecode once, not
    once per edited module (each edit is undone after its test)."""
    copy = tmp_path_factory.mktemp("tree")
    shutil.copytree(ROOT / "core", copy / "core", ignore=shutil.ignore_patterns("__pycache__"))
    return copy, _run(DIGEST, copy)


def test_a_copy_of_the_same_code_has_the_same_key(tree: tuple[Path, str]) -> None:
    assert tree[1] == _run(DIGEST)


@pytest.mark.parametrize(
    "module",
    ["core/text/sentences.py", "core/retrieval/bm25/fields.py", "core/cnl/permissions.py", "core/infra/json_locate.py"],
)
def test_editing_any_module_that_shapes_a_segment_changes_every_segment_key(
    tree: tuple[Path, str], module: str
) -> None:
    copy, before = tree
    source = copy / module
    original = source.read_bytes()
    source.write_bytes(original + b"\n# edited\n")
    try:
        assert _run(DIGEST, copy) != before
    finally:
        source.write_bytes(original)
