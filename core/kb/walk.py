"""Finding a KB folder's files, and saying which ones cannot be loaded because of their name or
their folder's permissions (instead of letting them vanish, or raise later)."""

from __future__ import annotations

import os
from pathlib import Path

from core.cnl import FOLDER_SUFFIXES
from core.infra.diagnostics import Code, Diagnostic

# synonyms.txt is the KB's synonyms file (core/text/synonyms.py), not KB text.
IGNORED_FILE_NAMES = frozenset({"queries.json", "synonyms.txt"})


def is_ignored_name(name: str) -> bool:
    """Files a KB folder holds that are not KB text: the eval file, the synonyms file, and a
    README (any case, any extension), which describes the folder rather than the domain. Named
    with `--kb`, a README is read like any file."""
    return name in IGNORED_FILE_NAMES or os.path.splitext(name)[0].lower() == "readme"


def printable(path: str | os.PathLike[str]) -> str:
    """`path` with the bytes that are not UTF-8 (kept by the OS as lone surrogates) written as
    `\\xNN`: a name every output, cache file and trace can hold."""
    return os.fspath(path).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def is_utf8_name(path: str | os.PathLike[str]) -> bool:
    return printable(path) == os.fspath(path)


def bad_name(path: str | os.PathLike[str]) -> Diagnostic:
    """Why a file (or folder) whose name is not UTF-8 is not loaded; the rest of the KB is."""
    return Diagnostic(
        code=Code.FILE_UNREADABLE,
        message="name is not valid UTF-8; rename it to load what it holds",
        file=printable(path),
    )


def walk_kb(
    folder: Path, stats: dict[str, tuple[int, int, int, int]] | None = None
) -> tuple[list[Path], list[Diagnostic]]:
    """The KB files under `folder` in a fixed order (by path parts), and a diagnostic for each
    folder that could not be listed and each file or folder whose name is not UTF-8. Hidden
    entries and `is_ignored_name` files are skipped silently; so are files of other extensions
    and links to folders. With `stats`, each file's (mtime_ns, size, inode, ctime_ns) goes into
    it (links followed; `MISSING` when it cannot be had): the walk's listing is reused, so a
    file costs one `stat`."""
    found: list[Path] = []
    problems: list[Diagnostic] = []
    _walk(str(folder), found, problems, stats)
    return found, problems


MISSING = (-1, -1, -1, -1)


def _walk(folder: str, found: list[Path], problems: list[Diagnostic], stats: dict | None) -> None:
    try:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
    except OSError as error:
        problems.append(
            Diagnostic(
                code=Code.FILE_UNREADABLE,
                message=f"folder cannot be read ({error.strerror or error}); the files in it are not loaded",
                file=printable(error.filename if error.filename is not None else folder),
            )
        )
        return
    for entry in entries:
        name = entry.name
        if _is_hidden(name):
            continue
        if _is_folder(entry):
            if not is_utf8_name(name):
                problems.append(bad_name(entry.path))
            elif not entry.is_symlink():  # as os.walk: links to folders are not followed
                _walk(entry.path, found, problems, stats)
            continue
        if is_ignored_name(name) or os.path.splitext(name)[1].lower() not in FOLDER_SUFFIXES:
            continue
        if not is_utf8_name(name):
            problems.append(bad_name(entry.path))
            continue
        found.append(Path(entry.path))
        if stats is not None:
            try:
                info = entry.stat()
                stats[entry.path] = (info.st_mtime_ns, info.st_size, info.st_ino, info.st_ctime_ns)
            except OSError:
                stats[entry.path] = MISSING


def _is_folder(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _is_hidden(name: str) -> bool:
    return name.startswith(".")
