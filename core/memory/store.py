"""Memory on disk: one JSON Lines file per conversation and one for the user's durable notes, per caller.

    <root>/<caller digest>/conversation-<name>.jsonl     active-session turns and summaries
    <root>/<caller digest>/conversation-<name>.vectors   their HDC vectors (core/memory/vectors.py)
    <root>/<caller digest>/user.jsonl                    notes the user pinned
    <root>/<caller digest>/.<file>.lock                  the lock every change to <file> holds

`root` is `$XDG_DATA_HOME/mrptui/memory` by default. Folders are made 0700 and files 0600: a record
quotes what its caller was shown. Each file is a log (core/memory/journal.py): appended under a
lock, rewritten by temp file + rename under the same lock, bounded (`maxRecords`, `maxFileBytes`,
oldest records dropped first). A folder that exists keeps the mode its owner gave it.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from core.infra.config import MemoryConfig
from core.memory.journal import Journal, MemoryFileError, writable_folder

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class MemoryNameError(ValueError):
    """A conversation name or memory folder that cannot be used; the message says why."""


def default_root() -> Path:
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "mrptui" / "memory"


def check_name(name: str) -> str:
    """A conversation name becomes part of a file name: letters, digits, `.`, `_`, `-`, at most 64."""
    if not _NAME.fullmatch(name):
        raise MemoryNameError(
            f"conversation name {name!r} must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
        )
    return name


class MemoryStore:
    def __init__(self, root: Path, config: MemoryConfig):
        self.root = Path(root)
        self.config = config
        self._journals: dict[Path, Journal] = {}

    def path(self, caller: str, conversation: str | None) -> Path:
        name = f"conversation-{check_name(conversation)}.jsonl" if conversation else "user.jsonl"
        return self.root / caller / name

    def journal(self, caller: str, conversation: str | None) -> Journal:
        """The log of one file, kept per store so its parsed records are reused while it is unchanged."""
        path = self.path(caller, conversation)
        if path not in self._journals:
            self._journals[path] = Journal(path, caller, self.config)
        return self._journals[path]

    def check_folders(self, caller: str) -> None:
        """`MemoryFileError` when the memory folder or the caller's folder is there but is no folder
        (checked once, so a bad `$MRPTUI_MEMORY_DIR` is one warning, not one per file)."""
        for folder in (self.root, self.root / caller):
            try:
                info = os.stat(folder)
            except FileNotFoundError:
                return
            except OSError as exc:
                raise MemoryFileError(folder, f"memory folder cannot be used ({exc.strerror or exc})") from None
            if not stat.S_ISDIR(info.st_mode):
                raise MemoryFileError(folder, "memory folder is not a folder")

    def make_folders(self, caller: str) -> None:
        """Create the memory and caller folders (0700) that are missing; existing ones are left as they are."""
        self.check_folders(caller)
        for folder in (self.root, self.root / caller):
            if folder.is_dir():
                continue
            writable_folder(next(p for p in folder.parents if p.exists()))
            try:
                folder.mkdir(parents=True, mode=0o700)
            except FileExistsError:
                continue
            except OSError as exc:
                raise MemoryFileError(folder, f"memory folder cannot be made ({exc.strerror or exc})") from None
