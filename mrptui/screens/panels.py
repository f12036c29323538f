"""A screen of panels in a weighted grid: the focused (active) panel, tabs in narrow terminals,
zoom, and the pane layout grown, shrunk or cycled through presets and kept across sessions. The
main screen is one; what it shows in the panels is its own business."""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.events import Resize
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Tabs

from mrptui.layout import Layout, load_layout, next_preset, save_layout
from mrptui.widgets.answer import CitationList

PANELS: tuple[tuple[str, str], ...] = (
    ("plan", "Plan"),
    ("attempts", "Attempts"),
    ("evidence", "Evidence"),
    ("proofs", "Proofs"),
    ("answer", "Answer"),
)
NARROW_WIDTH = 110
NARROW_HEIGHT = 30


class PanelScreen(Screen[None]):
    """The panels `#plan` … `#answer` (class `panel`) in the grid `#panels`, with tabs `#panel-tabs`."""

    def __init__(self, *, layout_path: Path | None = None) -> None:
        """`layout_path`: where the pane layout is kept across sessions (None: not kept)."""
        super().__init__()
        self.active_panel = "attempts"
        self.layout_path = layout_path
        self.pane_layout = load_layout(layout_path)

    # -- layout -----------------------------------------------------------------------------

    def on_resize(self, event: Resize) -> None:
        narrow = event.size.width < NARROW_WIDTH or event.size.height < NARROW_HEIGHT
        self.set_class(narrow, "-narrow")
        self._sync_tabs()

    def _apply_layout(self) -> None:
        panels = self.query_one("#panels")
        panels.styles.grid_columns = self.pane_layout.grid_columns
        panels.styles.grid_rows = self.pane_layout.grid_rows

    def _set_layout(self, layout: Layout, what: str) -> None:
        self.pane_layout = layout
        self._apply_layout()
        problem = save_layout(self.layout_path, layout)
        self.notify(problem or f"layout: {what} (columns {'/'.join(map(str, layout.columns))}, "
                    f"rows {'/'.join(map(str, layout.rows))})", severity="warning" if problem else "information",
                    timeout=3)

    def action_cycle_layout(self) -> None:
        layout = next_preset(self.pane_layout)
        self._set_layout(layout, layout.name)

    def action_resize_pane(self, step: int) -> None:
        if self.narrow:
            self.notify("one pane at a time in a narrow terminal: z zooms it", timeout=3)
            return
        self._set_layout(self.pane_layout.resized(self.active_panel, step),
                         f"{self.active_panel} {'grown' if step > 0 else 'shrunk'}")

    @property
    def narrow(self) -> bool:
        return self.has_class("-narrow")

    def _set_active(self, key: str, *, focus: bool) -> None:
        self._mark_active(key)
        if focus:
            self.panel_focus_target(key).focus()

    def _mark_active(self, key: str) -> None:
        self.active_panel = key
        for panel_key, _ in PANELS:
            self.query_one(f"#{panel_key}").set_class(panel_key == key, "-active")
        self._sync_tabs()

    def _sync_tabs(self) -> None:
        """The tabs show only in narrow terminals: keep them in step there (moving their underline
        costs a layout pass, which wide terminals need not pay on every focus change)."""
        if not self.narrow:
            return
        tabs = self.query_one("#panel-tabs", Tabs)
        if tabs.active != f"tab-{self.active_panel}":
            tabs.active = f"tab-{self.active_panel}"

    def panel_focus_target(self, key: str) -> Widget:
        if key == "answer":
            citations = self.query_one(CitationList)
            if citations.display and citations.option_count:
                return citations
        return self.query_one(f"#{key}")

    @on(Tabs.TabActivated, "#panel-tabs")
    def _tab_activated(self, event: Tabs.TabActivated) -> None:
        key = (event.tab.id or "tab-attempts").removeprefix("tab-")
        if key != self.active_panel:
            self._set_active(key, focus=self.narrow)

    def on_descendant_focus(self, event) -> None:
        widget = event.widget if hasattr(event, "widget") else None
        node = widget
        while node is not None and node is not self:
            if node.has_class("panel") and node.id:
                if node.id != self.active_panel:
                    self._mark_active(node.id)
                return
            node = node.parent

    def action_panel(self, key: str) -> None:
        self._set_active(key, focus=True)

    def action_zoom(self) -> None:
        """Maximise the active panel (the one with focus, or the last one that had it); again restores."""
        if self.maximized is not None:
            self.minimize()
            return
        panel = self.query_one(f"#{self.active_panel}")
        self.maximize(panel, container=False)
        self.panel_focus_target(self.active_panel).focus()
