"""A pane that still shows the previous question while a new run starts says so in its title: the
run's start no longer blanks every pane (issue 41)."""

from __future__ import annotations

from textual.color import Color
from textual.css.styles import Styles
from textual.geometry import Region
from textual.widget import Widget

STALE_LABEL = " · previous question"
# The title's colour and style while stale (the theme's variable, looked up when the mark is set).
STALE_COLOR_VARIABLE = "warning-muted"
STALE_TITLE_STYLE = "italic"
_STALE_RULES = ("auto_border_title_color", "border_title_color", "border_title_style")


def is_stale(pane: Widget) -> bool:
    """Whether the pane carries the stale mark's style (a pane may set its own title meanwhile)."""
    return pane.styles.inline.has_rule("border_title_style")


def _stale_rules(pane: Widget) -> Styles:
    """The mark's inline rules, parsed as a style sheet would (a `Styles` without a node repaints nothing)."""
    rules = Styles()
    # The stylesheet's own value of the variable: what a `$warning-muted` rule would resolve to.
    # `$text-muted`, the title's usual colour, is "auto": the flag would override the colour.
    rules.auto_border_title_color = False
    rules.border_title_color = Color.parse(pane.app.stylesheet._variables[STALE_COLOR_VARIABLE])
    rules.border_title_style = STALE_TITLE_STYLE
    return rules


def mark_stale(pane: Widget, stale: bool) -> None:
    """Add or remove the stale mark. Only the border title, its colour and its style change, as
    the pane's inline styles: a CSS class would restyle the pane's whole subtree, component
    classes and all, twice a question for each of the five panes (~7% of the UI thread while
    questions run back to back). Only the top border line is repainted: setting a title or a
    style repaints the whole pane, every line through the border, padding and tint again, which
    made the run's start a full-screen frame (~15% of the UI thread's time a question)."""
    title = str(pane.border_title or "").removesuffix(STALE_LABEL)
    marked = title + STALE_LABEL if stale else title
    changed = marked != (pane.border_title or "")
    if changed:
        pane._border_title = pane.render_str(marked).expand_tabs(4).split()[0]  # as Widget.border_title's setter
    if stale != is_stale(pane):
        changed = True
        inline = pane.styles.inline
        rules = _stale_rules(pane) if stale else None
        for rule in _STALE_RULES:
            inline.set_rule(rule, rules.get_rule(rule, None) if rules is not None else None)
    if changed and pane.is_mounted:
        # The region is the content's: the top border line sits one `content_offset` above it.
        offset = pane.content_offset
        pane.refresh(Region(-offset.x, -offset.y, pane.outer_size.width, 1))
