"""The why-not window (`w` on the KB screen): one row per lane, its reason wrapping under itself.

The lanes and reasons are a two-column grid, not lines of text: a reason longer than the window
wraps in its own column, so a wrapped line starts under the reason's first word rather than at the
window's edge, under the lane names."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Grid, Vertical, VerticalScroll
from textual.markup import escape
from textual.widgets import Static

from mrptui.screens.modals import TextModal
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
                with Grid(id="why-not-reasons"):
                    for lane, reason in self.reasons.items():
                        yield Static(f"[b]{escape(lane)}[/b]", classes="why-not-lane")
                        yield Static(escape(reason), classes="why-not-reason")
                if not self.reasons:
                    yield Static("[$foreground-muted]the session gave no reasons[/]")
        yield KeyBar()
