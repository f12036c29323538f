"""A pane that still shows the previous question while a new run starts says so in its title: the
run's start no longer blanks every pane (issue 41)."""

from __future__ import annotations

from textual.color import Color
from textual.widget import Widget

STALE_LABEL = " · previous question"
# The title's colour and style while stale (the theme's variable, looked up when the mark is set).
STALE_COLOR_VARIABLE = "warning-muted"
STALE_TITLE_STYLE = "italic"
_STALE_RULES = ("auto_border_title_color", "border_title_color", "border_title_style")


def is_stale(pane: Widget) -> bool:
    """Whether the pane carries the stale mark's style (a pane may set its own title meanwhile)."""
    return pane.styles.inline.has_rule("border_title_style")


def mark_stale(pane: Widget, stale: bool) -> None:
    """Add or remove the stale mark. Only the border title, its colour and its style change, as
    the pane's inline styles: a CSS class would restyle the pane's whole subtree, component
    classes and all, twice a question for each of the five panes (~7% of the UI thread while
    questions run back to back). The content and its own styles stay, so its rendered lines are
    drawn from cache."""
    title = str(pane.border_title or "").removesuffix(STALE_LABEL)
    pane.border_title = title + STALE_LABEL if stale else title
    if stale == is_stale(pane):
        return
    styles = pane.styles
    if stale:
        # The stylesheet's own value of the variable: what a `$warning-muted` rule would resolve to.
        # `$text-muted`, the title's usual colour, is "auto": the flag would override the colour.
        styles.auto_border_title_color = False
        styles.border_title_color = Color.parse(pane.app.stylesheet._variables[STALE_COLOR_VARIABLE])
        styles.border_title_style = STALE_TITLE_STYLE
    else:
        for rule in _STALE_RULES:
            styles.clear_rule(rule)
        pane.refresh()
