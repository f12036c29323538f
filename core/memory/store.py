"""Memory on disk: one JSON Lines file per conversation and one for the user's durable notes, per caller.

    <root>/<caller digest>/conversation-<name>.jsonl     active-session turns and summaries
    <root>/<caller digest>/user.jsonl                    notes the user pinned

`root` is `$XDG_DATA_HOME/mrptui/memory` by default. Folders are 0700 and files 0600: a record quotes
what its caller was shown. Files are replaced atomically and bounded (`maxRecords`, `maxFileBytes`,
oldest records dropped first); a line that does not validate is a diagnostic with its line number and
is dropped, never guessed at.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from core.config import MemoryConfig
from core.diagnostics import Code, Diagnostic
from core.memory.records import MemoryRecord
from core.safe_io import FileTooLarge, UnsafePath, atomic_write_text, read_regular

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
        self.problems: list[Diagnostic] = []

    def path(self, caller: str, conversation: str | None) -> Path:
        name = f"conversation-{check_name(conversation)}.jsonl" if conversation else "user.jsonl"
        return self.root / caller / name

    def load(self, caller: str, conversation: str | None) -> list[MemoryRecord]:
        path = self.path(caller, conversation)
        try:
            data = read_regular(path, self.config.max_file_bytes)
        except FileNotFoundError:
            return []
        except (FileTooLarge, UnsafePath, OSError) as exc:
            reason = getattr(exc, "reason", None) or getattr(exc, "strerror", None) or str(exc)
            self.problems.append(Diagnostic(code=Code.FILE_UNREADABLE, message=f"memory: {reason}", file=str(path)))
            return []
        records = []
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = MemoryRecord.model_validate_json(line)
            except ValidationError as exc:
                message = f"memory record dropped: {exc.errors()[0]['msg']}"
                self.problems.append(Diagnostic(code=Code.MALFORMED_LINE, message=message, file=str(path), line=number))
                continue
            # A record filed under another caller's folder is never read as this caller's.
            if record.caller == caller:
                records.append(record)
        return records[-self.config.max_records:]

    def save(self, caller: str, conversation: str | None, records: Sequence[MemoryRecord]) -> None:
        """Replace the file with `records`, oldest dropped first until both bounds hold."""
        path = self.path(caller, conversation)
        lines = [record.model_dump_json() + "\n" for record in records][-self.config.max_records:]
        size = sum(len(line.encode()) for line in lines)
        while lines and size > self.config.max_file_bytes:
            size -= len(lines.pop(0).encode())
        _private_folder(path.parent)
        atomic_write_text(path, lines, mode=0o600)  # 0600 from its first byte: no window readable by others

    def remove(self, caller: str, conversation: str | None) -> bool:
        path = self.path(caller, conversation)
        try:
            path.unlink()
        except FileNotFoundError:
            return False
        return True

    def conversations(self, caller: str) -> list[str]:
        folder = self.root / caller
        if not folder.is_dir():
            return []
        names = (p.name[len("conversation-"):-len(".jsonl")] for p in folder.glob("conversation-*.jsonl"))
        return sorted(n for n in names if _NAME.fullmatch(n))


def _private_folder(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    for part in (folder, folder.parent):
        if part.is_dir() and part.stat().st_uid == os.getuid():
            os.chmod(part, 0o700)
