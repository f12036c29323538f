"""Whether a widget's styles changed since it last drew a pseudo-class state (issue 41).

Textual calls `notify_style_update` on every focus move, and DataTable and Tree answer it by
dropping every rendered line (Tree also lays the whole screen out again). Their line caches are
already keyed on the pseudo-class state (focus, hover), so a focus move needs none of that: the
lines drawn for each state stay right until the styles of that state change (a theme or a CSS
reload). A widget keeps a `DrawnStyles`, calls `expect_change` where the style update arrives and
asks `changed` where it draws, once the new component styles are in place.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual.widget import Widget


class DrawnStyles:
    """The styles a widget drew each pseudo-class state with."""

    def __init__(self, component_classes: Iterable[str]) -> None:
        self._classes = tuple(sorted(component_classes))
        self._checked = True
        self._drawn: dict[object, tuple] = {}  # pseudo-class state -> its styles when drawn

    def expect_change(self) -> None:
        """A style update arrived: the next draw compares the styles."""
        self._checked = False

    def changed(self, widget: Widget) -> bool:
        """Whether the styles of `widget`'s current state differ from those it last drew that state
        with, after a style update (the caller then drops its rendered lines)."""
        if self._checked:
            return False
        self._checked = True
        state = widget.get_pseudo_class_state()
        # A component's drawn style is its own rules over the widget's style: comparing the rules
        # (as the stylesheet set them) is as exact as comparing the Rich styles built from them,
        # and costs a dict comparison instead of a style resolution per component.
        components = widget._component_styles
        styles = (
            widget.rich_style,
            widget.background_colors,
            tuple(dict(components[name].base._rules) for name in self._classes if name in components),
        )
        changed = self._drawn.get(state, styles) != styles
        if changed:
            self._drawn.clear()
        self._drawn[state] = styles
        return changed
