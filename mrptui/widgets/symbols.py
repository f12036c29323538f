"""Status symbols and tones shared by the panels: colour is never the only signal."""

from __future__ import annotations

# status -> (symbol, tone); tones map to theme variables in app.tcss / markup below.
STATUS: dict[str, tuple[str, str]] = {
    "success": ("✓", "ok"),
    "accepted": ("✓", "ok"),
    "grounded": ("✓", "ok"),
    "running": ("⋯", "running"),
    "unsupported": ("↷", "skip"),
    "insufficient": ("✗", "warn"),
    "no-context": ("∅", "warn"),
    "weak": ("≈", "warn"),
    "error": ("✗", "bad"),
    "rejected": ("✗", "bad"),
    "failed": ("✗", "bad"),
    "idle": ("·", "skip"),
    "skipped": ("↷", "skip"),
    "cancelled": ("■", "warn"),
    "held": ("⏸", "backtrack"),
}

TONE_VARIABLE: dict[str, str] = {
    "ok": "$success",
    "warn": "$warning",
    "bad": "$error",
    "skip": "$foreground-muted",
    "running": "$accent",
    "backtrack": "$warning",
    "plan": "$primary",
}


def status_symbol(status: str) -> tuple[str, str]:
    """The symbol and tone for an attempt, validation or answer status."""
    return STATUS.get(status, ("?", "skip"))


def tone_markup(text: str, tone: str) -> str:
    """Content markup colouring already-escaped `text` with the theme variable for `tone`."""
    return f"[{TONE_VARIABLE.get(tone, '$foreground')}]{text}[/]"
