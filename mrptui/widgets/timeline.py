"""The attempts timeline: plan revisions, attempts (status as symbol + colour) and backtracks inline."""

from __future__ import annotations

from collections.abc import Collection
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.coordinate import Coordinate
from textual.widgets import DataTable

from mrptui.state import BACKTRACK_LABELS, Breakpoint, TimelineRow
from mrptui.widgets.symbols import status_symbol
from mrptui.widgets.tables import component_style, refill


def row_detail(row: TimelineRow, *, show_durations: bool = True) -> str:
    """Everything a timeline row stands for, uncut (its tooltip and its Enter window)."""
    if row.kind == "plan":
        head = f"plan revision r{row.revision} by {row.plugin}"
        return head + (f"\nreasons: {row.reason}" if row.reason else "")
    if row.kind == "intervention":
        when = "applied live at a held point" if row.status == "live" else "applied from the start of this re-run"
        return f"✎ change by the user, {when}\n{row.reason}"
    if row.kind == "backtrack":
        symbol, what = BACKTRACK_LABELS.get(row.level or 0, ("?", "backtrack"))
        reason = row.reason.removeprefix(f"{what}:").strip()
        return f"{symbol} L{row.level} {what} after {row.plugin} (stage {row.stage})\n{reason}"
    head = f"{row.stage} · {row.plugin} · plan r{row.revision}"
    if row.intent_index:
        head += f" · intent #{row.intent_index}"
    if show_durations and row.ms is not None:
        head += f" · {row.ms:.1f} ms"
    reason = f": {row.reason}" if row.reason and row.reason != row.status else ""
    return f"{head}\n{row.status}{reason}"


class AttemptsTimeline(DataTable):
    """Each attempt with status, reason and (optionally) duration; backtracks marked with their level."""

    HELP = """\
## Attempts timeline
Every plan revision (▤), every plugin attempt in order and every backtrack, as the engine ran them
up to the current event.

- ✓ success/accepted · ✗ insufficient/error/rejected · ↷ unsupported · ⋯ still running
- ↩ L1: the stage tries its next candidate · ⟲ L2: the next planner replans · ≈ L3: weak answer
- ● marks a row that a breakpoint matches; ✎ a change you made (live at a held point, or from the
  start of a re-run).

Select a row, then pin (`p`) or exclude (`x`) its plugin, or toggle a breakpoint on its plugin (`t`)
or stage (`T`). On a backtrack row `t` toggles "break on any backtrack". While the engine is held
before a call, a pin or exclusion of what has not run yet applies live when you continue; otherwise
the question re-runs with the change. ⏸ marks the call the engine is held before.
A reason cut at the panel's edge is shown whole in the row's tooltip, and `enter` opens it.
"""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "timeline--ok", "timeline--warn", "timeline--bad", "timeline--skip", "timeline--running",
        "timeline--backtrack", "timeline--plan", "timeline--break", "timeline--muted",
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right", "screen.step_forward", "Step", show=False, id="timeline.right"),
        Binding("left", "screen.step_back", "Back", show=False, id="timeline.left"),
        Binding("home", "screen.to_start", "To start", show=False, id="timeline.home"),
        Binding("end", "screen.to_end", "To end", show=False, id="timeline.end"),
        Binding("t", "screen.toggle_break", "Break", id="timeline.break", tooltip="Toggle a breakpoint on this row's plugin (or on backtracks)"),
        Binding("T", "screen.toggle_break_stage", "Break stage", id="timeline.break_stage", tooltip="Toggle a breakpoint on this row's stage"),
        Binding("p", "screen.pin", "Pin", id="timeline.pin",
                tooltip="Pin this row's plugin first in its stage: live while held before that stage, else a re-run"),
        Binding("x", "screen.exclude", "Exclude", id="timeline.exclude",
                tooltip="Exclude this row's plugin: live while held before it is called, else a re-run"),
    ]

    def __init__(self, *, show_durations: bool = True, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes, cursor_type="row", zebra_stripes=False)
        self.show_durations = show_durations
        self._rows: tuple[TimelineRow, ...] = ()
        self._breakpoints: frozenset[Breakpoint] = frozenset()
        self._live: tuple[bool, float | None] = (False, None)  # (held before the last row, its running ms)

    @property
    def _columns(self) -> list[tuple[str, str]]:
        if self.show_durations:
            return [("sym", ""), ("what", "attempt"), ("ms", "ms"), ("reason", "status: reason")]
        return [("sym", ""), ("what", "attempt"), ("reason", "status: reason")]

    def on_mount(self) -> None:
        refill(self, self._columns, [], fixed={"sym": 3, "what": 14})
        self.app.theme_changed_signal.subscribe(self, lambda _: self._rebuild())

    # -- rendering --------------------------------------------------------------------------

    def show(self, rows: tuple[TimelineRow, ...], breakpoints: Collection[Breakpoint], *, held: bool = False,
             running_ms: float | None = None) -> None:
        points = frozenset(breakpoints)
        live = (held, None if running_ms is None else round(running_ms, -2))
        if rows == self._rows and points == self._breakpoints and live == self._live:
            return
        follow = self.row_count == 0 or self.cursor_row >= self.row_count - 1
        self._rows, self._breakpoints, self._live = rows, points, live
        self._rebuild(follow=follow)

    def _style(self, tone: str):
        return component_style(self, f"timeline--{tone}")

    def _hit(self, row: TimelineRow) -> bool:
        for point in self._breakpoints:
            if point.kind == "backtrack" and row.kind == "backtrack":
                return True
            if point.kind == "plugin" and row.kind == "attempt" and row.plugin == point.value:
                return True
            if point.kind == "stage" and row.kind == "attempt" and row.stage == point.value:
                return True
        return False

    def _cells(self, row: TimelineRow) -> list[Text]:
        mark = Text("●", style=self._style("break")) if self._hit(row) else Text(" ")
        if row.kind == "plan":
            style = self._style("plan")
            reasons = f": {row.reason}" if row.reason else ""
            cells = [Text("▤", style=style), Text(f"plan r{row.revision}", style=style),
                     Text.assemble((row.plugin, style), (reasons, self._style("muted")))]
        elif row.kind == "intervention":
            style = self._style("running")
            cells = [Text("✎", style=style), Text("you", style=style), Text(f"{row.status}: {row.reason}", style=style)]
        elif row.kind == "backtrack":
            symbol, what = BACKTRACK_LABELS.get(row.level or 0, ("?", "backtrack"))
            style = self._style("backtrack")
            reason = row.reason.removeprefix(f"{what}:").strip()
            cells = [Text(symbol, style=style), Text(f"L{row.level}", style=style),
                     Text(f"{what}: {reason}", style=style)]
        else:
            held = self._live[0] and row.status == "running" and row is self._rows[-1]
            symbol, tone = status_symbol("held" if held else row.status)
            style = self._style(tone)
            intent = f"#{row.intent_index} " if row.intent_index else ""
            reason = f": {row.reason}" if row.reason and row.reason != row.status else ""
            if held:
                reason = ": not called yet (n steps, . continues, g runs to the end)"
            cells = [Text(symbol, style=style), Text(row.plugin, style=style),
                     Text(f"{intent}{'held' if held else row.status}{reason}")]
        cells[0] = Text.assemble(mark, cells[0])
        if self.show_durations:
            ms = f"{row.ms:.1f}" if row.kind == "attempt" and row.ms is not None else ""
            if row.kind == "attempt" and row.status == "running" and self._live[1] is not None and row is self._rows[-1]:
                ms = f"{self._live[1]:.0f}…"
            cells.insert(2, Text(ms, justify="right", style=self._style("muted")))
        return cells

    def _rebuild(self, follow: bool = False) -> None:
        if not self.is_mounted:
            return
        cursor = self.cursor_row
        refill(self, self._columns, [self._cells(row) for row in self._rows], fixed={"sym": 3, "what": 14})
        if self.row_count:
            target = self.row_count - 1 if follow else min(cursor, self.row_count - 1)
            self.move_cursor(row=target, animate=False, scroll=True)

    def watch_hover_coordinate(self, old: Coordinate, value: Coordinate) -> None:
        super().watch_hover_coordinate(old, value)
        row = self._rows[value.row] if 0 <= value.row < len(self._rows) else None
        self.tooltip = row_detail(row, show_durations=self.show_durations) if row is not None else None

    # -- reading ----------------------------------------------------------------------------

    @property
    def selected(self) -> TimelineRow | None:
        if not self._rows or not (0 <= self.cursor_row < len(self._rows)):
            return None
        return self._rows[self.cursor_row]

    def copy_text(self) -> str | None:
        row = self.selected
        return row.label if row else None
