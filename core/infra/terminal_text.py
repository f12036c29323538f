"""Text from outside (an LLM reply) made safe for any terminal that will show it.

An LLM reply can carry characters a terminal obeys rather than shows: ESC sequences that clear
the screen or set the window title, BEL, NUL, other C0/C1 controls, and bidi overrides that make
text read differently than it is stored. Each is written as its `\\uXXXX` escape: readable, and
inside JSON a valid escape of the very same character.
"""

from __future__ import annotations

import re

# C0 but tab and newline, DEL and C1, the bidi embeddings/overrides/isolates and marks, and lone
# surrogates (undecodable bytes of a file name or text).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def terminal_safe(text: str) -> str:
    return _UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)
