"""The Memory screen (ctrl+o): this conversation's records and your notes, scored for the last question
as seed 001 says (sim, recency R, scope S, quality Q, score), with the ones that question used marked."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, cast

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.markup import escape
from textual.screen import Screen
from textual.widgets import DataTable, Static

from core.kernel.events import IntentDetected
from core.kernel.summary import position_notes
from core.memory.scoring import ScoredRecord
from mrptui.explorer import Explorer
from mrptui.messages import MemoryClear, MemoryForget, MemoryPin
from mrptui.widgets.keybar import KeyBar
from mrptui.widgets.tables import refill

MEMORY_COLUMNS = [
    ("used", "used"),
    ("where", "turn"),
    ("kind", "kind"),
    ("text", "question → lead"),
    ("sim", "sim"),
    ("r", "R"),
    ("s", "S"),
    ("q", "Q"),
    ("score", "score"),
]


# used, turn, kind and the five numbers with DataTable's cell padding, the border and scrollbar.
NUMBER_COLUMNS_WIDTH = 56


def used_ids(events: Sequence[object]) -> set[str]:
    return {i for e in events if isinstance(e, IntentDetected) for i in e.memory_used}


def record_row(scored: ScoredRecord, used: set[str]) -> list[object]:
    record = scored.record
    where = f"{record.turn}" if record.scope == "session" else "note"
    text = record.question + (f" → {record.lead}" if record.lead else "")
    mark = Text("✓", style="bold") if record.id in used else ""
    return [
        mark,
        where,
        record.kind,
        text,
        f"{scored.sim:.2f}",
        f"{scored.recency:.2f}",
        f"{scored.scope_weight:.1f}",
        f"{scored.quality:.2f}",
        f"{scored.score:.3f}",
    ]


def referent_notes(events: Sequence[object]) -> tuple[list[str], list[str]]:
    """What the last question's follow-up resolution did, and what it left as asked and why
    (each rewrite with its candidates, features and weights: core/memory/referents.py)."""
    intents = [e for e in events if isinstance(e, IntentDetected)]
    return (
        list(dict.fromkeys(n for e in intents for n in e.resolved)),
        list(dict.fromkeys(n for e in intents for n in e.unresolved)),
    )


def record_detail(
    scored: ScoredRecord, used: bool, notes: tuple[list[str], list[str]] = ([], []), placed: str = ""
) -> str:
    r = scored.record
    lines = [f"[b]{escape(r.question)}[/b]"]
    if r.lead:
        lines.append(f"→ {escape(r.lead)}")
    lines.append(
        f"[$foreground-muted]{r.kind} · {r.scope} · id {r.id}"
        + (f" · about {escape(r.entity)}" if r.entity else "")
        + "[/]"
    )
    lines.append(
        f"score {scored.score:.3f} = (0.7·sim {scored.sim:.2f} + 0.2·R {scored.recency:.3f} "
        f"+ 0.1·S {scored.scope_weight:.1f}) · Q {scored.quality:.2f}"
    )
    if r.unit_ids:
        lines.append("cites: " + ", ".join(escape(u) for u in r.unit_ids))
    if r.source_ids:
        lines.append(f"summary of {len(r.source_ids)} turns, confidence {r.confidence:.2f}")
    if used:
        lines.append("[$success]used by the last question[/]")
        lines += [f"  {escape(note)}" for note in notes[0]]
    if placed:  # its cited units placed the last question's candidates (core/memory/position.py)
        lines.append("[$success]its evidence placed the last question's candidates[/]")
        lines += [f"  {escape(note)}" for note in placed.splitlines()]
    lines += [f"[$warning]left as asked:[/] {escape(note)}" for note in notes[1]]
    return "\n".join(lines)


class MemoryScreen(Screen[None]):
    HELP = """\
## Memory
What a follow-up question ("it", "their", "And X?") can refer back to: the turns of this
conversation (summaries once it grows long) and your notes, each scored for the last question —
score = (0.7·sim + 0.2·R + 0.1·S)·Q (docs/scoring.md, "Memory"). ✓ marks the records the last
question used. A record shows only while every unit it cites is in your view and still says what
it said when the turn was answered; the title counts the others, which no question reuses.

- `p` pins the last question and its answer as a note (kept across sessions).
- `delete` forgets the selected record; `x` clears this conversation's turns.
- `escape` goes back.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape,q",
            "app.pop_screen",
            "Back",
            id="memory.back",
            tooltip="Back to the screen this one was opened from",
        ),
        Binding("p", "pin", "Pin answer", id="memory.pin", tooltip="Pin the last question and answer as a note"),
        Binding("delete", "forget", "Forget", id="memory.forget", tooltip="Forget the selected record"),
        Binding("x", "clear", "Clear turns", id="memory.clear", tooltip="Forget every turn of this conversation"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.records: list[ScoredRecord] = []
        self.used: set[str] = set()  # ✓: used by the follow-up's resolution or placing its evidence
        self.resolved_by: set[str] = set()
        self.placed: dict[str, str] = {}

    @property
    def explorer(self) -> Explorer:
        return cast(Explorer, self.app)

    def compose(self) -> ComposeResult:
        yield Static("Memory", id="memory-title", classes="screen-title")
        table: DataTable[object] = DataTable(id="memory-table", cursor_type="row", zebra_stripes=True)
        table.border_title = "Records"
        yield table
        with VerticalScroll(id="memory-detail") as detail:
            detail.border_title = "Selected record"
            yield Static("", id="memory-detail-text")
        yield KeyBar()

    def on_resize(self) -> None:
        self.load()

    def on_mount(self) -> None:
        self.watch(self.app, "memory_generation", lambda _: self.load(), init=False)
        self.load()
        self.query_one("#memory-table", DataTable).focus()

    def load(self) -> None:
        app = self.explorer
        memory = app.memory
        question = app.last_question
        self.records, withheld = memory.scored(question), memory.withheld()
        run = app.current
        self.placed = position_notes(run.events) if run else {}
        self.resolved_by = used_ids(run.events) if run else set()
        self.used = self.resolved_by | set(self.placed)
        self.notes = referent_notes(run.events) if run else ([], [])
        table = self.query_one("#memory-table", DataTable)
        cursor = table.cursor_row
        # The numbers stay in view: the text column takes what the others leave of the table.
        text_width = max(20, table.size.width - NUMBER_COLUMNS_WIDTH) if table.size.width else 60
        refill(table, MEMORY_COLUMNS, [record_row(s, self.used) for s in self.records], fixed={"text": text_width})
        if table.row_count:
            table.move_cursor(row=min(cursor, table.row_count - 1), animate=False)
        name = f"conversation {memory.name}" if memory.name else "this session's conversation"
        stale = f" · {len(withheld)} not used (a unit they cite changed or left your view)" if withheld else ""
        state = (
            "memory is off (no KB open)"
            if memory.conversation is None
            else f"{len(self.records)} record(s){stale} · scored for: {question or '(no question yet)'}"
        )
        self.query_one("#memory-title", Static).update(f"Memory · {escape(name)} · {escape(state)}")
        self._render_detail()

    @property
    def selected(self) -> ScoredRecord | None:
        table = self.query_one("#memory-table", DataTable)
        if not (0 <= table.cursor_row < len(self.records)):
            return None
        return self.records[table.cursor_row]

    def _render_detail(self) -> None:
        chosen = self.selected
        text = (
            record_detail(
                chosen, chosen.record.id in self.resolved_by, self.notes, self.placed.get(chosen.record.id, "")
            )
            if chosen
            else "[$foreground-muted]No records yet: ask a question in the main screen; follow-ups use what it leaves here.[/]"
        )
        self.query_one("#memory-detail-text", Static).update(text)

    @on(DataTable.RowHighlighted, "#memory-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._render_detail()

    def action_pin(self) -> None:
        self.post_message(MemoryPin())

    def action_forget(self) -> None:
        chosen = self.selected
        if chosen is None:
            self.notify("select a record first", severity="warning")
            return
        self.post_message(MemoryForget(chosen.record.id))

    def action_clear(self) -> None:
        self.post_message(MemoryClear())
