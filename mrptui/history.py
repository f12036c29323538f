"""The question history: what was asked, newest last, kept across sessions like a shell's.

Stored as JSON Lines (one JSON string per question, so multi-line questions survive) in
`$MRPTUI_HISTORY`, else `$XDG_DATA_HOME/mrptui/history`, else `~/.local/share/mrptui/history`.
A history that cannot be read or written never stops the explorer: it stays in memory.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from core.infra.safe_io import atomic_write_text
from mrptui.paths import read_only, user_data_dir

HISTORY_ENV = "MRPTUI_HISTORY"
MAX_ENTRIES = 1000


def history_path() -> Path:
    override = os.environ.get(HISTORY_ENV)
    if override:
        return Path(override).expanduser()
    return user_data_dir() / "history"


class QuestionHistory:
    """Questions in order (oldest first), without consecutive repeats, at most MAX_ENTRIES."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.entries: list[str] = self._load() if path is not None else []
        self.error = ""

    def _load(self) -> list[str]:
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")  # type: ignore[union-attr]
        except OSError:
            return []
        entries = []
        for line in text.split("\n"):
            try:
                value = json.loads(line) if line.strip() else None
            except json.JSONDecodeError:
                continue  # a damaged line costs that entry, not the history
            if isinstance(value, str) and value.strip():
                entries.append(value)
        return entries[-MAX_ENTRIES:]

    def add(self, question: str) -> None:
        if not question.strip() or (self.entries and self.entries[-1] == question):
            return
        self.entries.append(question)
        trimmed = len(self.entries) > MAX_ENTRIES
        del self.entries[:-MAX_ENTRIES]
        self._save(rewrite=trimmed, question=question)

    def _save(self, *, rewrite: bool, question: str) -> None:
        if self.path is None:
            return
        if why := read_only(self.path):
            self.error = f"question history not saved to {self.path}: it {why}"
            return
        # Questions can quote what the caller was shown: readable by their owner only.
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            if rewrite:
                atomic_write_text(self.path, "".join(json.dumps(e) + "\n" for e in self.entries), mode=0o600)
            else:
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
                with os.fdopen(fd, "a", encoding="utf-8") as out:
                    os.fchmod(fd, 0o600)
                    out.write(json.dumps(question) + "\n")
        except OSError as exc:
            self.error = f"question history not saved to {self.path}: {exc.strerror or exc}"

    def search(self, term: str, before: int) -> int | None:
        """The index of the newest entry older than `before` that contains `term` (case-insensitive)."""
        needle = term.casefold()
        for index in range(min(before, len(self.entries)) - 1, -1, -1):
            if needle in self.entries[index].casefold():
                return index
        return None
