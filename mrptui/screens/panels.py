"""A screen of panels in a weighted grid: the focused (active) panel, tabs in narrow terminals,
zoom, and the pane layout grown, shrunk or cycled through presets and kept across sessions. The
main screen is one; what it shows in the panels is its own business."""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.events import Resize
from textual.reactive import Reactive
from textual.widget import Widget
from textual.widgets import Tabs

from mrptui.keys_in_force import KeepsActiveBindings
from mrptui.layout import FIT, WEIGHT_MAX, WEIGHT_MIN, Layout, fit_columns, load_layout, next_preset, save_layout
from mrptui.screens.dirty_frames import DirtyFramesCompositor
from mrptui.ui_first import PaintsInputAtOnce
from mrptui.widgets.answer import CitationList
from mrptui.widgets.tables import NaturalWidth

PANELS: tuple[tuple[str, str], ...] = (
    ("plan", "Plan"),
    ("attempts", "Attempts"),
    ("evidence", "Evidence"),
    ("proofs", "Proofs"),
    ("answer", "Answer"),
)
NARROW_WIDTH = 110
NARROW_HEIGHT = 30


class PanelScreen(KeepsActiveBindings, PaintsInputAtOnce):
    """The panels `#plan` … `#answer` (class `panel`) in the grid `#panels`, with tabs `#panel-tabs`."""

    # Textual's Screen repaints itself whenever focus moves, and a dirty screen is recomposed and
    # written whole, every line of every pane (issue 25: a panel key with no run, 10k units, 160x45,
    # load 0.5, took 43-48 ms median with it and 35 ms without).
    # Nothing the screen draws depends on focus: the panes that gain and lose it repaint themselves
    # through their :focus styles, so only their lines are redrawn.
    focused: Reactive[Widget | None] = Reactive(None, repaint=False)

    def __init__(self, *, layout_path: Path | None = None) -> None:
        """`layout_path`: where the pane layout is kept across sessions (None: not kept)."""
        super().__init__()
        self._compositor = DirtyFramesCompositor()
        self.active_panel = "attempts"
        self.layout_path = layout_path
        self.pane_layout = load_layout(layout_path)
        self._fitted = ""
        self._fit_frozen = False

    # -- layout -----------------------------------------------------------------------------

    def on_resize(self, event: Resize) -> None:
        narrow = event.size.width < NARROW_WIDTH or event.size.height < NARROW_HEIGHT
        self.set_class(narrow, "-narrow")
        self._sync_tabs()
        self.call_after_refresh(self._refit)

    def _apply_layout(self) -> None:
        panels = self.query_one("#panels")
        panels.styles.grid_columns = self._fitted_columns() or self.pane_layout.grid_columns
        panels.styles.grid_rows = self.pane_layout.grid_rows

    def _want(self, key: str) -> int:
        """Cells the panel's content would take uncut, with its border and scrollbar (0: nothing to show)."""
        panel = self.query_one(f"#{key}")
        natural = getattr(panel, "natural_width", 0)
        return natural + panel.styles.gutter.width + panel.styles.scrollbar_size_vertical if natural else 0

    def _fitted_columns(self) -> str:
        """The "fit" layout's columns in cells, from what the panels show; '' for the weights of a
        preset or of the user's grow/shrink (their choice wins), and before the grid has a width."""
        total = self.query_one("#panels").size.width
        if self.pane_layout.name != FIT or not total:
            return ""
        weights = self.pane_layout.columns
        left, answer = fit_columns(
            total, max(self._want("plan"), self._want("attempts")), self._want("evidence"), weights[2] / sum(weights)
        )
        return f"{left} 1fr {answer}"

    @on(NaturalWidth)
    def _content_width_changed(self, event: NaturalWidth) -> None:
        event.stop()
        if not self._fit_frozen:
            self._refit()

    def freeze_fit(self, frozen: bool) -> None:
        """While the engine runs, the fitted split stays as it is; it fits the panes again when the
        run holds or ends. A run's content changes width several times (the evidence table empties,
        then fills; the plan grows), and each change re-laid out and repainted every pane and
        refilled the tables, up to 500 rows, while keys waited (issue 25, keypress while a question
        runs). At rest the split is always that of what is shown, however the run's events arrived."""
        thawed = self._fit_frozen and not frozen
        self._fit_frozen = frozen
        if thawed:
            self._refit()

    def _refit(self) -> None:
        columns = self._fitted_columns()
        if columns and columns != self._fitted:
            self._fitted = columns
            self.query_one("#panels").styles.grid_columns = columns

    def _set_layout(self, layout: Layout, what: str) -> None:
        self.pane_layout = layout
        self._fitted = ""
        self._apply_layout()
        problem = save_layout(self.layout_path, layout)
        columns = "fitted to the panes" if layout.name == FIT else "/".join(map(str, layout.columns))
        self.notify(
            problem or f"layout: {what} (columns {columns}, rows {'/'.join(map(str, layout.rows))})",
            severity="warning" if problem else "information",
            timeout=3,
        )

    def action_cycle_layout(self) -> None:
        layout = next_preset(self.pane_layout)
        self._set_layout(layout, layout.name)

    def action_resize_pane(self, step: int) -> None:
        if self.narrow:
            self.notify("one pane at a time in a narrow terminal: z zooms it", timeout=3)
            return
        if self.maximized is not None:  # the grid is hidden (0 cells wide): growing it would show nothing
            self.notify("a zoomed pane has the whole screen: z restores the grid to resize its panes", timeout=3)
            return
        self._set_layout(
            self._as_weights().resized(self.active_panel, step),
            f"{self.active_panel} {'grown' if step > 0 else 'shrunk'}",
        )

    def _as_weights(self) -> Layout:
        """The layout in weights; the fitted split as the weights nearest its columns, so growing
        a pane starts from what is on screen."""
        total = self.query_one("#panels").size.width
        if self.pane_layout.name != FIT or not self._fitted or not total:
            return self.pane_layout
        left, _, answer = (int(part) if part.isdigit() else 0 for part in self._fitted.split())
        columns = [left, total - left - answer, answer]
        weights = tuple(max(WEIGHT_MIN, min(WEIGHT_MAX, round(c * WEIGHT_MAX / total))) for c in columns)
        return self.pane_layout.model_copy(update={"columns": weights})

    @property
    def narrow(self) -> bool:
        return self.has_class("-narrow")

    def _set_active(self, key: str, *, focus: bool) -> None:
        self._mark_active(key)
        if focus:
            self.panel_focus_target(key).focus()

    def _mark_active(self, key: str) -> None:
        self.active_panel = key
        self._sync_tabs()

    def _sync_active_class(self) -> None:
        """`-active` shows the one panel a narrow terminal has room for (app.tcss); wide, no style
        reads it, and restyling two panels on every focus move cost each key (issue 25)."""
        for panel_key, _ in PANELS:
            self.query_one(f"#{panel_key}").set_class(self.narrow and panel_key == self.active_panel, "-active")

    def _sync_tabs(self) -> None:
        """The tabs show only in narrow terminals: keep them in step there (moving their underline
        costs a layout pass, which wide terminals need not pay on every focus change)."""
        self._sync_active_class()
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
