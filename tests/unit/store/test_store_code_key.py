"""A cached segment is served only to the reader code that built it.

Segments hold units and their permission columns as the readers read them. A cache built by other
reader code (an older mrptui that published a unit whose permission field it did not read, which
today's readers withdraw) must never be served: every module that decides what a segment holds is
in its key. The key's file list used to be written by hand and missed `core/text/sentences.py` (where
plain-text sentences end) and, once the BM25 fields moved, `core/retrieval/bm25/fields.py`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core.store import shaping
from core.store.shaping import _record_path, digest_of, shaping_files

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


DIGEST = "from core.store.shaping import code_digest; print(code_digest())"


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


# The digest kept in the cache (core/store/shaping.py): reused only while every file it read and
# every folder searched is as it was, and was last changed well before it was read.


@pytest.fixture
def shaping_tree(tmp_path: Path) -> Path:
    """A copy of the files that shape a segment, as a `core` folder of its own."""
    core = ROOT / "core"
    copy = tmp_path / "core"
    for file in shaping_files():
        target = copy / file.relative_to(core)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(file, target)
    return copy


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder, with the racy window closed: the copy was written a moment ago, and
    `os.utime` cannot set a file's ctime back (the last test keeps the window)."""
    monkeypatch.setattr(shaping, "RACY_NS", 0)
    root = tmp_path / "cache"
    root.mkdir()
    return root


def _forge(core: Path, root: Path) -> None:
    """Replace the recorded digest, so a test can tell a digest served from the record."""
    path = _record_path(core, root)
    record = json.loads(path.read_bytes())
    path.write_text(json.dumps({**record, "digest": "forged"}))


def test_the_recorded_digest_is_served_while_the_tree_is_unchanged(shaping_tree: Path, cache: Path) -> None:
    root = cache
    hashed = digest_of(shaping_tree, root)
    assert hashed == digest_of(shaping_tree, None)
    _forge(shaping_tree, root)
    assert digest_of(shaping_tree, root) == "forged"


def test_an_edit_keeping_size_and_mtime_is_not_served_the_recorded_digest(shaping_tree: Path, cache: Path) -> None:
    root = cache
    before = digest_of(shaping_tree, root)
    _forge(shaping_tree, root)
    reader = shaping_tree / "cnl" / "permissions.py"
    info = reader.stat()
    text = reader.read_bytes()
    reader.write_bytes(text.replace(b"a", b"b", 1))  # same size
    os.utime(reader, ns=(info.st_atime_ns, info.st_mtime_ns))  # same mtime: only ctime moves
    assert reader.stat().st_size == info.st_size and reader.stat().st_mtime_ns == info.st_mtime_ns
    after = digest_of(shaping_tree, root)
    assert after not in ("forged", before)
    assert after == digest_of(shaping_tree, None)


def test_a_module_added_where_the_readers_look_is_not_served_the_recorded_digest(
    shaping_tree: Path, cache: Path
) -> None:
    root = cache
    before = digest_of(shaping_tree, root)
    _forge(shaping_tree, root)
    (shaping_tree / "cnl" / "new_reader.py").write_text("X = 1\n")  # `cnl/*.py` shapes segments
    assert digest_of(shaping_tree, root) not in ("forged", before)


def test_a_record_taken_within_the_racy_window_is_not_trusted(shaping_tree: Path, tmp_path: Path) -> None:
    # Just written (now): an edit in the same timestamp tick as the read could keep every stat.
    root = tmp_path / "cache"
    root.mkdir()
    hashed = digest_of(shaping_tree, root)
    assert _record_path(shaping_tree, root).is_file()
    _forge(shaping_tree, root)
    assert digest_of(shaping_tree, root) == hashed


def test_an_edit_of_the_shaping_module_itself_is_not_served_the_recorded_digest(
    shaping_tree: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A root added to `_SHAPING_ROOTS` must be covered by the next record, so its own source counts.
    module = cache.parent / "shaping.py"
    module.write_text("_SHAPING_ROOTS = ()\n")
    monkeypatch.setattr(shaping, "_THIS", module)
    before = digest_of(shaping_tree, cache)
    _forge(shaping_tree, cache)
    module.write_text("_SHAPING_ROOTS = ('x',)\n")
    assert digest_of(shaping_tree, cache) == before != "forged"
