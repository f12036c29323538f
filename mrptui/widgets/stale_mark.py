"""A pane that still shows the previous question while a new run starts says so in its title
(the `stale` class styles it in app.tcss): the run's start no longer blanks every pane (issue 41)."""

from __future__ import annotations

from textual.widget import Widget

STALE_LABEL = " · previous question"


def mark_stale(pane: Widget, stale: bool) -> None:
    """Add or remove the stale mark. Only the border title and its colour change: the pane's
    content and its own styles stay, so its rendered lines are drawn from cache."""
    pane.set_class(stale, "stale")
    title = str(pane.border_title or "").removesuffix(STALE_LABEL)
    pane.border_title = title + STALE_LABEL if stale else title
