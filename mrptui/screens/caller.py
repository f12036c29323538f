"""The caller window (ctrl+g): who the explorer asks as — ACL tags, region, as-of date — changed
without a restart. Enter in any field applies (a field that is refused says why and the window
stays), Esc closes without a change."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, Vertical
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from core.units import Caller
from mrptui.caller_text import CallerError, parse_caller
from mrptui.widgets.keybar import KeyBar


@dataclass(frozen=True)
class CallerChoice:
    """The caller chosen; `follow_today`: no as-of was typed, so the date follows the calendar."""

    caller: Caller
    follow_today: bool


class CallerInput(Input):
    """A caller field: its Enter (Input's submit, unshown) named on the window's key bar."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "submit", "Ask as", id="caller.apply", tooltip="Ask as this caller (re-runs the question)"),
    ]


class CallerModal(ModalScreen[CallerChoice | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="caller.cancel", tooltip="Close without changing the caller"),
        # Priority: the focus moves as the key arrives. Bubbled up from the field, as Textual's own
        # tab does, it moved after the keys typed behind it (tmux send-keys, a paste) had gone into
        # the field it left: "staff<tab>EU" read as the tag "staffEU".
        Binding("tab", "app.focus_next", "Next field", show=False, priority=True, id="caller.next"),
        Binding("shift+tab", "app.focus_previous", "Previous field", show=False, priority=True, id="caller.previous"),
    ]

    def __init__(self, caller: Caller, *, follow_today: bool, today: Callable[[], dt.date] = dt.date.today) -> None:
        super().__init__()
        self.caller = caller
        self.follow_today = follow_today
        self.today = today

    def compose(self) -> ComposeResult:
        caller = self.caller
        as_of = "" if self.follow_today else caller.as_of.isoformat()
        with Vertical(id="dialog", classes="dialog caller-dialog") as dialog:
            dialog.border_title = "Ask as another caller"
            with Grid(id="caller-fields"):
                yield Label("ACL tags")
                yield CallerInput(
                    ",".join(sorted(caller.tags)), placeholder="none: the public caller", id="caller-tags"
                )
                yield Label("region")
                yield CallerInput(caller.region or "", placeholder="none", id="caller-region")
                yield Label("as of")
                yield CallerInput(as_of, placeholder="today, following the calendar (YYYY-MM-DD)", id="caller-as-of")
            yield Static(
                "[$foreground-muted]Tags are comma-separated. The KB is read as this caller before any ranking; "
                "the last question runs again as it.[/]",
                id="caller-note",
            )
            yield Static("", id="caller-problems")
        yield KeyBar()

    def on_mount(self) -> None:
        for field in self.query(Input):
            field.cursor_blink = getattr(self.app, "cursor_blink", True)
        self.query_one("#caller-tags", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        tags, region, as_of = (self.query_one(f"#caller-{name}", Input).value for name in ("tags", "region", "as-of"))
        try:
            caller = parse_caller(tags, region, as_of, self.today())
        except CallerError as exc:
            said = (
                f"as of: a date like 2026-05-27, not {exc.messages[0]!r}"
                if exc.field == "as_of"
                else "; ".join(f"tags/region: {msg}" for msg in exc.messages)
            )
            self.query_one("#caller-problems", Static).update(f"[$error]{escape(said)}[/]")
            return
        self.dismiss(CallerChoice(caller, follow_today=not as_of.strip()))

    def action_cancel(self) -> None:
        self.dismiss(None)
