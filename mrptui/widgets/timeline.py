"""The attempts timeline: plan revisions, attempts (status as symbol + colour) and backtracks inline."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.coordinate import Coordinate
from textual.widgets import DataTable

from core.kernel.events import ShardTiming
from mrptui.breakpoints import Breakpoint
from mrptui.state import BACKTRACK_LABELS, TimelineRow
from mrptui.widgets.symbols import status_symbol
from mrptui.widgets.tables import FilledTable, component_style, refill

FoldKey = tuple[int, str, int, str]  # (plan revision, stage, intent, reason)


@dataclass(frozen=True)
class Fold:
    """Candidates of one stage that were not reached for the same reason, shown as one row."""

    rows: tuple[TimelineRow, ...]

    @property
    def key(self) -> FoldKey:
        return fold_key(self.rows[0])

    @property
    def plugins(self) -> list[str]:
        return [row.plugin for row in self.rows]

    @property
    def text(self) -> str:
        """ "kb-balanced was sufficient: kb-fast, kb-thinkingdb" (the reason names the stage's own
        candidates only, so the summary keeps every reason on the row of its plugins)."""
        reason = self.rows[0].reason.removeprefix("not reached").lstrip(": ")
        return f"{reason + ': ' if reason else ''}{', '.join(self.plugins)}"

    @property
    def label(self) -> str:
        return f"↷ {len(self.rows)} not reached ({self.rows[0].stage}, r{self.rows[0].revision}): {self.text}"


Entry = TimelineRow | Fold


def _not_reached(row: TimelineRow) -> bool:
    return row.kind == "attempt" and row.status == "skipped" and row.reason.startswith("not reached")


def fold_key(row: TimelineRow) -> FoldKey:
    return (row.revision, row.stage, row.intent_index, row.reason)


def fold_rows(rows: Sequence[TimelineRow], expanded: Collection[FoldKey] = ()) -> list[Entry]:
    """The timeline's entries: each run of two or more "not reached" rows of one stage, revision,
    intent and reason becomes one `Fold`, unless its key is in `expanded`."""
    entries: list[Entry] = []
    start = 0
    while start < len(rows):
        row = rows[start]
        end = start + 1
        if _not_reached(row):
            while end < len(rows) and _not_reached(rows[end]) and fold_key(rows[end]) == fold_key(row):
                end += 1
        group = tuple(rows[start:end])
        if len(group) > 1 and fold_key(row) not in expanded:
            entries.append(Fold(group))
        else:
            entries.extend(group)
        start = end
    return entries


def entry_detail(entry: Entry, *, show_durations: bool = True) -> str:
    if isinstance(entry, Fold):
        head = (
            f"{len(entry.rows)} candidates of stage {entry.rows[0].stage} (plan r{entry.rows[0].revision}) not reached"
        )
        return "\n".join([head, *(f"{row.plugin}: {row.reason}" for row in entry.rows), "space lists them as rows"])
    return row_detail(entry, show_durations=show_durations)


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
        return f"{symbol} L{row.level} {row.backtrack_head} (stage {row.stage})\n{reason}"
    head = f"{row.stage} · {row.plugin} · plan r{row.revision}"
    if row.intent_index:
        head += f" · intent #{row.intent_index}"
    if show_durations and row.ms is not None:
        head += f" · {row.ms:.1f} ms"
    reason = f": {row.reason}" if row.reason and row.reason != row.status else ""
    return f"{head}\n{row.status}{reason}" + shard_lines(row.shards, show_durations=show_durations)


def silent_shards(shards: Sequence[ShardTiming]) -> str:
    """ "shard 3 of 4 did not answer", "shards 1, 3 of 4 did not answer", or "" when all answered."""
    silent = [str(s.shard) for s in shards if not s.answered]
    if not silent:
        return ""
    listed = ", ".join(silent[:SHARDS_LISTED]) + (", …" if len(silent) > SHARDS_LISTED else "")
    return f"shard{'s' if len(silent) > 1 else ''} {listed} of {shards[0].of} did not answer"


# Shards listed one a line in an attempt's detail; a bigger cluster's rest is counted.
SHARDS_LISTED = 32


def shard_lines(shards: Sequence[ShardTiming], *, show_durations: bool = True) -> str:
    """ "\nshard 1 of 2: 0.8 ms" per shard of an attempt on a cluster ("did not answer" for a
    silent one); "" in one process."""
    lines = [
        f"shard {s.shard} of {s.of}: "
        + (("answered" if not show_durations else f"{s.ms:.1f} ms") if s.answered else "did not answer")
        for s in shards[:SHARDS_LISTED]
    ]
    if len(shards) > SHARDS_LISTED:
        lines.append(f"… {len(shards) - SHARDS_LISTED} more shards")
    return "".join(f"\n{line}" for line in lines)


class AttemptsTimeline(FilledTable):
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
Candidates a stage did not reach for the same reason share one row (↷ 2 not reached: kb-balanced
was sufficient: kb-fast, kb-thinkingdb); `space` lists them as rows of their own, and on one of
those rows folds them again.
"""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "timeline--ok",
        "timeline--warn",
        "timeline--bad",
        "timeline--skip",
        "timeline--running",
        "timeline--backtrack",
        "timeline--plan",
        "timeline--break",
        "timeline--muted",
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right", "screen.step_forward", "Step", show=False, id="timeline.right"),
        Binding("left", "screen.step_back", "Back", show=False, id="timeline.left"),
        Binding("home", "screen.to_start", "To start", show=False, id="timeline.home"),
        Binding("end", "screen.to_end", "To end", show=False, id="timeline.end"),
        Binding(
            "t",
            "screen.toggle_break",
            "Break",
            id="timeline.break",
            tooltip="Toggle a breakpoint on this row's plugin (or on backtracks)",
        ),
        Binding(
            "T",
            "screen.toggle_break_stage",
            "Break stage",
            id="timeline.break_stage",
            tooltip="Toggle a breakpoint on this row's stage",
        ),
        Binding(
            "p",
            "screen.pin",
            "Pin",
            id="timeline.pin",
            tooltip="Pin this row's plugin first in its stage: live while held before that stage, else a re-run",
        ),
        Binding(
            "x",
            "screen.exclude",
            "Exclude",
            id="timeline.exclude",
            tooltip="Exclude this row's plugin: live while held before it is called, else a re-run",
        ),
        # One key, two actions: check_action offers the one that applies to the row (the key bar names it).
        Binding(
            "space",
            "unfold",
            "Unfold",
            id="timeline.unfold",
            tooltip="List the candidates this folded 'not reached' row stands for, one row each",
        ),
        Binding(
            "space",
            "fold",
            "Fold",
            id="timeline.fold",
            tooltip="Fold the listed 'not reached' candidates back into one row",
        ),
    ]

    def __init__(self, *, show_durations: bool = True, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes, cursor_type="row", zebra_stripes=False)
        self.show_durations = show_durations
        self._rows: tuple[TimelineRow, ...] = ()
        self.entries: list[Entry] = []  # what is drawn: the rows, "not reached" runs folded
        self.expanded: set[FoldKey] = set()
        self._breakpoints: frozenset[Breakpoint] = frozenset()
        self._live: tuple[bool, float | None] = (False, None)  # (held before the last row, its running ms)
        self._offered: tuple[bool | None, bool | None] | None = None  # (unfold, fold) as last published

    @property
    def _columns(self) -> list[tuple[str, str]]:
        if self.show_durations:
            return [("sym", ""), ("what", "attempt"), ("ms", "ms"), ("reason", "status: reason")]
        return [("sym", ""), ("what", "attempt"), ("reason", "status: reason")]

    def on_resize(self) -> None:
        self._rebuild()

    def on_mount(self) -> None:
        refill(self, self._columns, [], fixed={"sym": 3})
        self.app.theme_changed_signal.subscribe(self, lambda _: self._rebuild())

    # -- rendering --------------------------------------------------------------------------

    def show(
        self,
        rows: tuple[TimelineRow, ...],
        breakpoints: Collection[Breakpoint],
        *,
        held: bool = False,
        running_ms: float | None = None,
    ) -> None:
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

    def _fold_cells(self, fold: Fold) -> list[Text]:
        hit = any(self._hit(row) for row in fold.rows)
        style = self._style("skip")
        cells = [
            Text.assemble(Text("●", style=self._style("break")) if hit else Text(" "), Text("↷", style=style)),
            Text(f"{len(fold.rows)} not reached", style=style),
            Text(fold.text, style=self._style("muted")),
        ]
        if self.show_durations:
            cells.insert(2, Text(""))
        return cells

    def _cells(self, row: Entry) -> list[Text]:
        if isinstance(row, Fold):
            return self._fold_cells(row)
        mark = Text("●", style=self._style("break")) if self._hit(row) else Text(" ")
        if row.kind == "plan":
            style = self._style("plan")
            reasons = f": {row.reason}" if row.reason else ""
            cells = [
                Text("▤", style=style),
                Text(f"plan r{row.revision}", style=style),
                Text.assemble((row.plugin, style), (reasons, self._style("muted"))),
            ]
        elif row.kind == "intervention":
            style = self._style("running")
            cells = [Text("✎", style=style), Text("you", style=style), Text(f"{row.status}: {row.reason}", style=style)]
        elif row.kind == "backtrack":
            symbol, what = BACKTRACK_LABELS.get(row.level or 0, ("?", "backtrack"))
            style = self._style("backtrack")
            reason = row.reason.removeprefix(f"{what}:").strip()
            cells = [
                Text(symbol, style=style),
                Text(f"L{row.level}", style=style),
                Text(f"{row.backtrack_head}: {reason}", style=style),
            ]
        else:
            held = self._live[0] and row.status == "running" and row is self._rows[-1]
            symbol, tone = status_symbol("held" if held else row.status)
            style = self._style(tone)
            intent = f"#{row.intent_index} " if row.intent_index else ""
            reason = f": {row.reason}" if row.reason and row.reason != row.status else ""
            if held:
                reason = ": not called yet (n steps, . continues, g runs to the end)"
            if silent := silent_shards(row.shards):  # the silent shard first: the exception's name can wait
                reason = f": {silent}"
            # A candidate that was not called: its reason already says so ("not reached: …", "skipped: …").
            outcome = (
                row.outcome if row.status == "skipped" and row.reason else f"{'held' if held else row.status}{reason}"
            )
            cells = [Text(symbol, style=style), Text(row.plugin, style=style), Text(f"{intent}{outcome}")]
        cells[0] = Text.assemble(mark, cells[0])
        if self.show_durations:
            ms = f"{row.ms:.1f}" if row.kind == "attempt" and row.ms is not None else ""
            if (
                row.kind == "attempt"
                and row.status == "running"
                and self._live[1] is not None
                and row is self._rows[-1]
            ):
                ms = f"{self._live[1]:.0f}…"
            cells.insert(2, Text(ms, justify="right", style=self._style("muted")))
        return cells

    def _rebuild(self, follow: bool = False) -> None:
        if not self.is_mounted:
            return
        cursor = self.cursor_row
        self.entries = fold_rows(self._rows, self.expanded)
        # The reason gives way to the panel's width, never below its status word ("insufficient: …").
        refill(
            self,
            self._columns,
            [self._cells(entry) for entry in self.entries],
            fixed={"sym": 3},
            floors={"reason": 14, "what": 12},
        )
        if self.row_count:
            target = self.row_count - 1 if follow else min(cursor, self.row_count - 1)
            self.move_cursor(row=target, animate=False, scroll=True)

    def watch_hover_coordinate(self, old: Coordinate, value: Coordinate) -> None:
        super().watch_hover_coordinate(old, value)
        entry = self.entries[value.row] if 0 <= value.row < len(self.entries) else None
        self.tooltip = entry_detail(entry, show_durations=self.show_durations) if entry is not None else None

    def _listed(self, entry: Entry | None) -> bool:
        """A "not reached" row that space listed out of its fold (space folds it again)."""
        return isinstance(entry, TimelineRow) and _not_reached(entry) and fold_key(entry) in self.expanded

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # space unfolds on a folded row and folds on a row it listed; elsewhere it is not offered.
        if action == "unfold":
            return isinstance(self.selected_entry, Fold)
        if action == "fold":
            return self._listed(self.selected_entry)
        return True

    def _space_offers(self) -> tuple[bool | None, bool | None]:
        return self.check_action("unfold", ()), self.check_action("fold", ())

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        # Only when what space does changed: every refill of a live run highlights a row, and each
        # refresh_bindings makes the panel screen work its bindings out again (issue 41).
        if self._space_offers() != self._offered:
            self._publish_offers()

    def _publish_offers(self) -> None:
        self._offered = self._space_offers()
        self.refresh_bindings()

    def action_unfold(self) -> None:
        entry = self.selected_entry
        if isinstance(entry, Fold):
            self._set_folded(entry.key, folded=False)

    def action_fold(self) -> None:
        entry = self.selected_entry
        if isinstance(entry, TimelineRow) and self._listed(entry):
            self._set_folded(fold_key(entry), folded=True)

    def _set_folded(self, key: FoldKey, *, folded: bool) -> None:
        if folded:
            self.expanded.discard(key)
        else:
            self.expanded.add(key)
        self._rebuild()
        self._publish_offers()
        # The cursor stays on the group: its summary once folded, its first row once listed.
        first = next(
            i
            for i, e in enumerate(self.entries)
            if (e.key == key if isinstance(e, Fold) else _not_reached(e) and fold_key(e) == key)
        )
        self.move_cursor(row=first, animate=False, scroll=True)

    # -- reading ----------------------------------------------------------------------------

    @property
    def selected_entry(self) -> Entry | None:
        if not (0 <= self.cursor_row < len(self.entries)):
            return None
        return self.entries[self.cursor_row]

    @property
    def selected(self) -> TimelineRow | None:
        """The row under the cursor (None on a folded summary: it stands for several plugins)."""
        entry = self.selected_entry
        return entry if isinstance(entry, TimelineRow) else None

    def copy_text(self) -> str | None:
        entry = self.selected_entry
        return entry.label if entry else None
