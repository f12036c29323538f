"""The why-not window (`w` on the KB screen): one row per lane, its reason wrapping under itself
(a `FieldGrid`, not lines of text, whose wrapped lines started at the window's edge)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.markup import escape
from textual.widgets import Static

from mrptui.screens.modals import TextModal
from mrptui.widgets.field_grid import FieldGrid
from mrptui.widgets.keybar import KeyBar


class WhyNotModal(TextModal):
    """Why `unit_id` is not in the answer to `question`: each lane's reason, as the session gives them."""

    def __init__(self, unit_id: str, question: str, reasons: dict[str, str]) -> None:
        plain = "\n".join([f"why not {unit_id}? ({question})"] + [f"{k}: {v}" for k, v in reasons.items()])
        super().__init__(f"Why not {unit_id}?", f"question: “{escape(question)}”", plain=plain)
        self.reasons = reasons

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog") as dialog:
            dialog.border_title = self.title_text
            with VerticalScroll(id="dialog-body"):
                yield Static(f"[$foreground-muted]{self.markup}[/]", id="dialog-text")
                yield FieldGrid(list(self.reasons.items()), id="why-not-reasons")
                if not self.reasons:
                    yield Static("[$foreground-muted]the session gave no reasons[/]")
        yield KeyBar()
