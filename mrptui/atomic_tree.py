"""Writing a set of new files under one folder all at once or not at all (`mrptui init`).

The files are written in a hidden staging folder first, so a full disk or an interrupt never
leaves a half-written file where the user looks. A folder that did not exist is then renamed into
place in one step; into an existing folder each file is linked (which, unlike a rename, refuses a
name made meanwhile), and a failure takes back what was placed. An empty file already there (what
an earlier, interrupted version of init could leave) holds nothing to lose and is replaced.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
from pathlib import Path


class Conflict(Exception):
    """Files that exist and hold something: nothing was written."""

    def __init__(self, paths: list[Path]):
        super().__init__(", ".join(map(str, paths)))
        self.paths = paths


def write_new_tree(directory: Path, files: dict[Path, str]) -> None:
    """Write `files` (paths under `directory`) or nothing; raises `Conflict`, or the OSError that
    stopped it after undoing what it did."""
    taken = sorted(path for path in files if _holds_something(path))
    if taken:
        raise Conflict(taken)
    made = _make_parents(directory.parent)
    try:
        fresh = not os.path.lexists(directory)
        staging = Path(
            tempfile.mkdtemp(prefix=f".{directory.name}.init-", dir=directory.parent if fresh else directory)
        )
        try:
            for path, content in files.items():
                staged = staging / path.relative_to(directory)
                staged.parent.mkdir(parents=True, exist_ok=True)
                staged.write_text(content, encoding="utf-8")
            if fresh:
                os.rename(staging, directory)
            else:
                _place(staging, directory, files)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    except BaseException:
        for folder in reversed(made):
            _remove_empty(folder)
        raise


def _place(staging: Path, directory: Path, files: dict[Path, str]) -> None:
    placed: list[Path] = []
    made: list[Path] = []
    try:
        for path in files:
            made += _make_parents(path.parent)
            staged = staging / path.relative_to(directory)
            if os.path.lexists(path):  # empty, checked above
                os.replace(staged, path)
            else:
                _link(staged, path)
            placed.append(path)
    except BaseException:
        for path in placed:
            path.unlink(missing_ok=True)
        for folder in reversed(made):
            _remove_empty(folder)
        raise


def _link(staged: Path, path: Path) -> None:
    try:
        os.link(staged, path)
    except OSError as exc:
        # A file system without hard links: a rename, after one more look.
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP) or os.path.lexists(path):
            raise
        os.rename(staged, path)


def _holds_something(path: Path) -> bool:
    try:
        info = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    return not (stat.S_ISREG(info.st_mode) and info.st_size == 0)


def _make_parents(folder: Path) -> list[Path]:
    """Create `folder` and its missing parents; the ones created, outermost first."""
    missing = []
    while not os.path.lexists(folder):
        missing.append(folder)
        folder = folder.parent
    made: list[Path] = []
    try:
        for path in reversed(missing):
            path.mkdir()
            made.append(path)
    except BaseException:
        for path in reversed(made):
            _remove_empty(path)
        raise
    return made


def _remove_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass
