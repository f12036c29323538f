"""Frames that draw only the widgets their dirty regions touch (issue 41, keypress while a
question runs).

Textual paints a frame by drawing, in full, every widget that overlaps the one rectangle around
all dirty regions, then writes only the dirty spans. A panel key dirties two panes and the key
bar at the bottom, so that rectangle is most of the screen and every pane, scrollbar and line
of the status was drawn again (each from its kept lines, ~12 ms of the UI thread a frame at
160x45 while a question ran); only what lies in a dirty region reaches the terminal.

Which widget fills a piece of a line does not depend on what else is drawn: a line is cut at every
widget's edge (`Compositor.cuts`, still made from every visible widget), and each piece goes to the
front-most widget covering it whole. A piece written to the terminal overlaps a dirty span, so the
widget that fills it overlaps that dirty region; a widget whose visible area overlaps no dirty
region fills only pieces that are never written. Leaving such widgets out writes the same bytes.
"""

from __future__ import annotations

from textual._compositor import ChopsUpdate, Compositor
from textual.geometry import Region


class DirtyFramesCompositor(Compositor):
    """A Compositor whose partial updates draw only the widgets that overlap a dirty region."""

    def render_partial_update(self) -> ChopsUpdate | None:
        dirty = list(self._dirty_regions)
        if not dirty or self.size.region in self._dirty_regions:
            return super().render_partial_update()
        visible = self.visible_widgets
        self.cuts  # noqa: B018 - made (and kept) from every visible widget before the filter below
        overlaps = Region.overlaps
        touched = {}
        for widget, (region, clip) in visible.items():
            shown = region.intersection(clip)
            if any(overlaps(shown, area) for area in dirty):
                touched[widget] = (region, clip)
        self._visible_widgets = touched
        try:
            return super().render_partial_update()
        finally:
            if self._visible_widgets is touched:  # not dropped meanwhile: the full set again
                self._visible_widgets = visible
