"""The source that decides what a segment holds, and its digest (part of every segment's key).

What a segment holds is decided by the readers, the tokenizer, the unit model, … and every core
module they import, found by reading their imports (`shaping_files`): a module a reader comes to
import is covered without a list to keep up, so a cache built by other reader code (one that
published a unit the current readers withdraw) is never served.

Reading and hashing those ~45 files cost every process ~20–50 ms (issue 41: a warm `mrptui ask`),
so the digest is kept in the cache beside the source records and reused while every file read and
every folder searched has the stat it had then (mtime, size, inode, ctime: an edit that keeps size
and mtime still moves ctime; a module added or removed moves its folder's), and only when those
were last changed at least `RACY_NS` before they were read: an edit within the same timestamp tick
as the read could otherwise leave every stat alone (git's racy-clean rule).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from pathlib import Path

from core.store.atomic import replace_file
from core.store.contents import SOURCES
from core.store.private import private_dirs
from core.store.segment import FORMAT_VERSION

_SHAPING_ROOTS = (
    "cnl/*.py",
    "text/tokenizer.py",
    "units.py",
    "infra/diagnostics.py",
    "infra/safe_io.py",
    "retrieval/bm25/fields.py",
    "store/segment.py",
    "store/codec.py",
)
_THIS = Path(__file__).resolve()
_CORE = _THIS.parent.parent
# Coarser than any local filesystem's timestamps (FAT: 2 s), as for the KB source records.
RACY_NS = 2_000_000_000
_RECORD_VERSION = 2
# Digests by core folder, for this process.
_KNOWN: dict[Path, str] = {}

Stat = list[int]


def code_digest(root: Path | None = None) -> str:
    """The digest of the source that decides what a segment holds: edit it and every segment
    rebuilds. `root`: a trusted cache folder whose record may vouch for it, and that keeps it for
    the next process (None: read and hash the files)."""
    digest = _KNOWN.get(_CORE)
    if digest is None:
        digest = _KNOWN[_CORE] = digest_of(_CORE, root)
    return digest


def digest_of(core: Path, root: Path | None) -> str:
    """`code_digest` of the tree `core`, from `root`'s record when it still vouches for it, else
    hashed (and recorded under `root`)."""
    recorded = _recorded(core, root) if root is not None else None
    if recorded is not None:
        return recorded
    read_ns = time.time_ns()
    files, folders = _shaping(core)
    # This module too: a root added to `_SHAPING_ROOTS` must be covered by the next record.
    covered = [*files, *folders, _THIS]
    before = _stats(covered)
    hasher = hashlib.sha256(str(FORMAT_VERSION).encode())
    for file in files:
        hasher.update(file.relative_to(core).as_posix().encode() + b"\0" + file.read_bytes())
    digest = hasher.hexdigest()
    if root is not None and before is not None and _stats(covered) == before:
        _record(core, root, {"version": _RECORD_VERSION, "digest": digest, "stats": before, "read_ns": read_ns})
    return digest


def shaping_files(core: Path = _CORE) -> list[Path]:
    """`_SHAPING_ROOTS` and every module of `core` they import, directly or not, in path order."""
    return _shaping(core)[0]


def _shaping(core: Path) -> tuple[list[Path], list[Path]]:
    """The shaping files, and every folder searched for them (a module added there may change them)."""
    todo = [path for pattern in _SHAPING_ROOTS for path in sorted(core.glob(pattern))]
    folders = {(core / pattern).parent for pattern in _SHAPING_ROOTS}
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        # A module's packages are loaded with it: `core.a.b` runs `core/a/__init__.py` first.
        split = [name.split(".") for name in _core_imports(path)]
        prefixes = {".".join(parts[:n]) for parts in split for n in range(1, len(parts) + 1)}
        for name in sorted(prefixes):
            base = core.joinpath(*name.split(".")[1:])
            folders.update((base, base.parent))
            found = next((file for file in (base / "__init__.py", base.with_suffix(".py")) if file.is_file()), None)
            if found is not None:
                todo.append(found)
    inside = (folder for folder in folders if folder == core or core in folder.parents)
    return sorted(seen), sorted(folder for folder in inside if folder.is_dir())


def _core_imports(path: Path) -> list[str]:
    """The `core.…` modules (and names that may be submodules) a source file imports, lazy ones
    too. A pattern, not `ast`: parsing every shaping file cost a cold `ask` 0.15 s."""
    names = []
    for match in _FROM_CORE.finditer(path.read_text(encoding="utf-8")):
        module, imported, plain = match.groups()
        if plain:
            names.append(plain)
            continue
        names.append(module)
        names += [f"{module}.{name.split()[0]}" for name in imported.strip("()").split(",") if name.strip()]
    return names


# `from core.x import a, b` (parenthesised over lines too) or `import core.x`, at any indentation.
_FROM_CORE = re.compile(
    r"^[ \t]*(?:from[ \t]+(core(?:\.\w+)*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]+)|import[ \t]+(core(?:\.\w+)*))",
    re.MULTILINE,
)


def _stats(paths: list[Path]) -> dict[str, Stat] | None:
    """Each path's stat by its name; None when one cannot be taken."""
    try:
        return {str(path): _stat(path) for path in paths}
    except OSError:
        return None


def _stat(path: Path) -> Stat:
    info = os.stat(path)
    return [info.st_mtime_ns, info.st_size, info.st_ino, info.st_ctime_ns]


def _record_path(core: Path, root: Path) -> Path:
    # One record per source tree: checkouts sharing a cache keep theirs apart.
    return root / SOURCES / f"code-{hashlib.sha256(os.fsencode(core)).hexdigest()[:32]}.json"


def _recorded(core: Path, root: Path) -> str | None:
    """The digest `root` recorded for `core`, if every path it covers still has the stat it had
    and none had changed within `RACY_NS` before it was read; else None."""
    try:
        record = json.loads(_record_path(core, root).read_bytes())
        stats = record["stats"]
        if (
            record["version"] != _RECORD_VERSION
            or not stats
            or any(_stat(Path(name)) != stat for name, stat in stats.items())
            or record["read_ns"] - max(max(stat[0], stat[3]) for stat in stats.values()) < RACY_NS
        ):
            return None
        return str(record["digest"])
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None


def _record(core: Path, root: Path, record: dict) -> None:
    path = _record_path(core, root)
    try:
        private_dirs(path.parent, root)
        replace_file(path, json.dumps(record).encode())
    except OSError:
        pass  # only a shortcut: the next process hashes the files
