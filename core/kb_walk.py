"""Finding a KB folder's files, and saying which ones cannot be loaded because of their name or
their folder's permissions (instead of letting them vanish, or raise later)."""

from __future__ import annotations

import os
from pathlib import Path

from core.cnl import FOLDER_SUFFIXES
from core.diagnostics import Code, Diagnostic

# synonyms.txt is the KB's synonyms file (core/synonyms.py), not KB text.
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


def walk_kb(folder: Path) -> tuple[list[Path], list[Diagnostic]]:
    """The KB files under `folder` in a fixed order, and a diagnostic for each folder that could
    not be listed and each file or folder whose name is not UTF-8. Hidden entries and
    `is_ignored_name` files are skipped silently; so are files of other extensions."""
    found: list[Path] = []
    problems: list[Diagnostic] = []

    def unlisted(error: OSError) -> None:
        problems.append(
            Diagnostic(
                code=Code.FILE_UNREADABLE,
                message=f"folder cannot be read ({error.strerror or error}); the files in it are not loaded",
                file=printable(error.filename if error.filename is not None else folder),
            )
        )

    for root, dirs, names in os.walk(folder, onerror=unlisted):
        problems += [bad_name(Path(root) / name) for name in dirs if not _is_hidden(name) and not is_utf8_name(name)]
        dirs[:] = sorted(name for name in dirs if not _is_hidden(name) and is_utf8_name(name))
        for name in names:
            if _is_hidden(name) or is_ignored_name(name) or os.path.splitext(name)[1].lower() not in FOLDER_SUFFIXES:
                continue
            if is_utf8_name(name):
                found.append(Path(root) / name)
            else:
                problems.append(bad_name(Path(root) / name))
    found.sort(key=lambda path: path.relative_to(folder).parts)
    return found, problems


def _is_hidden(name: str) -> bool:
    return name.startswith(".")
