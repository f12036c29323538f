"""Text the CLI prints, made safe for a terminal.

An LLM reply (and a KB file, a plugin's reason) can carry bytes a terminal obeys rather than
shows: ESC sequences that clear the screen or set the window title, BEL, NUL, other C0/C1
controls, and bidi overrides that make text read differently than it is stored. Every such
character is written as its `\\uXXXX` escape: readable, and inside `--json` output a valid JSON
escape of the very same character, so what a program parses does not change.
"""

from __future__ import annotations

import re
from typing import TextIO

# C0 but tab and newline, DEL and C1, the bidi embeddings/overrides/isolates and marks, and lone
# surrogates (undecodable bytes of a file name or text).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def terminal_safe(text: str) -> str:
    return _UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


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
