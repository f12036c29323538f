"""Text the CLI prints, made safe for a terminal.

An LLM reply (and a KB file, a plugin's reason) can carry bytes a terminal obeys rather than
shows: ESC sequences that clear the screen or set the window title, BEL, NUL, other C0/C1
controls, and bidi overrides that make text read differently than it is stored. Every such
character is written as its `\\uXXXX` escape: readable, and inside `--json` output a valid JSON
escape of the very same character, so what a program parses does not change.
"""

from __future__ import annotations

from typing import TextIO

from core.infra.terminal_text import terminal_safe


class SafeStream:
    """A text stream that escapes what `terminal_safe` escapes before writing it to `stream`."""

    def __init__(self, stream: TextIO):
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(terminal_safe(text))
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)
