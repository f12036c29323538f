"""Copying: Textual sends the text to the terminal as an OSC 52 escape, which tmux passes on to the
terminal's clipboard only with `set-clipboard on` (its default, `external`, drops it). Inside tmux
the copy notification says so until that option is on."""

from __future__ import annotations

import os
import subprocess
from functools import cache

TMUX_HINT = "tmux passes copies on only with `set -g set-clipboard on` (docs/tui.md)"
PREVIEW = 60


def preview(text: str) -> str:
    """The first line of `text`, cut at PREVIEW characters, with … when anything was left out."""
    first = text.splitlines()[0] if text else ""
    more = "…" if len(first) > PREVIEW or "\n" in text.strip("\n") else ""
    return first[:PREVIEW] + more


@cache
def tmux_clipboard_setting() -> str:
    """tmux's global set-clipboard value ("on", "external", "off"), or "" when it cannot be read.
    Asked once per process: the option rarely changes while the explorer runs."""
    try:
        done = subprocess.run(
            ["tmux", "show-options", "-gv", "set-clipboard"], capture_output=True, text=True, timeout=2, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def copy_note(message: str) -> str:
    """`message`, plus the tmux hint when running inside tmux without `set-clipboard on`."""
    if os.environ.get("TMUX") and tmux_clipboard_setting() != "on":
        return f"{message} · {TMUX_HINT}"
    return message


def copy_text(widget, text: str, message: str | None = None) -> None:
    """Put `text` on the clipboard from `widget` (a screen or widget) and say what was copied."""
    widget.app.copy_to_clipboard(text)
    widget.notify(copy_note(message or f"copied: {preview(text)}"), timeout=6)
