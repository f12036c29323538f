"""Component styles kept per styling context, not worked out again on every restyle (issue 41).

Textual restyles a widget's component classes whenever it restyles the widget: each class is
styled again through a virtual node against the whole stylesheet (`_process_component_classes`).
A focus move restyles the two panes it touches, and for the timeline, the evidence and the proof
tree that is 34 virtual nodes, ~4 ms of the UI thread a key. What a component's styles can
depend on is the stylesheet's rules and, for every node from the app down to the widget, its
id, classes and pseudo-classes: a focus move flips between two such contexts, so each context's
styles are kept and put back as Textual would set them (the widget is refreshed when they differ
from the ones it has). A new context, or new rules (a theme, a CSS reload), is styled by Textual.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.css.styles import RenderStyles

if TYPE_CHECKING:
    from textual.widget import Widget

    _Styled = Widget
else:  # a plain mixin, as QuietScrollbars: a Widget base here would put its default CSS first
    _Styled = object

# Contexts kept per widget: a pane sees two or three (focused, not, the cursor's row hovered);
# past this the kept ones are dropped rather than grown without bound.
_KEPT_CONTEXTS = 8


class KeptComponentStyles(_Styled):
    """A widget whose component styles are styled once per styling context."""

    _kept_component_styles: dict[tuple, dict[str, RenderStyles]] | None = None
    _kept_rules: list | None = None  # the stylesheet's rules the kept styles came from
    _styled_context: tuple | None = None  # the context Textual is styling, kept at the next call

    def _styling_context(self) -> tuple:
        """What the virtual nodes' matching reads of the DOM: every node on the CSS path."""
        return tuple(
            (node, node._id, node.classes, frozenset(node.get_pseudo_classes())) for node in self.css_path_nodes
        )

    def _get_component_classes(self) -> frozenset[str]:  # type: ignore[override]
        """The classes Textual is to style now: none when this context's styles are kept."""
        classes = super()._get_component_classes()
        kept = self._kept_component_styles
        rules = self.app.stylesheet.rules  # a new list when the stylesheet is parsed again
        if kept is None or rules is not self._kept_rules:
            kept = self._kept_component_styles = {}
            self._kept_rules = rules
            self._styled_context = None
        styled = self._component_styles
        if self._styled_context is not None and styled.keys() == classes:
            # Textual styled that context right after the last call: keep its result (unless a
            # removal from the DOM has cleared it since).
            if len(kept) >= _KEPT_CONTEXTS:
                kept.clear()
            kept[self._styled_context] = dict(styled)
        self._styled_context = None
        if not classes:
            return classes
        context = self._styling_context()
        styles = kept.get(context)
        if styles is None:
            self._styled_context = context
            return classes
        if styles != styled:  # Textual's test: the rules differ (RenderStyles ==)
            styled.clear()
            styled.update(styles)
            self.refresh()
        return frozenset()
