"""The question box: a small TextArea. Enter runs a one-line question; ctrl+s runs any question."""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.widgets import TextArea

from mrptui.messages import QuerySubmitted

PLACEHOLDER = "Ask a question — Enter runs it · ctrl+j new line · ctrl+s runs several lines · Esc leaves the box"


def normalise_question(text: str) -> str:
    """The question as the engine gets it: each line's whitespace collapsed, blank lines dropped."""
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


class QueryBox(TextArea):
    """The question. Enter runs a single line; ctrl+j (shift+enter where the terminal reports it)
    starts a new line; ctrl+s runs the question whatever its length; escape leaves the box.

    Every terminal delivers Enter (CR), ctrl+j (LF) and ctrl+s (flow control is off in Textual's
    raw mode) as distinct keys; shift+enter and ctrl+enter arrive as plain Enter in most of them.
    """

    HELP = """\
## Question
Type a question and press **Enter** to run the engine on it.

- **ctrl+j** (or **shift+enter** where the terminal reports it) starts a new line; pasted text keeps
  its lines. Once the question has more than one line, Enter starts a new line too and
  **ctrl+s** runs it.
- **Escape** leaves the box so the single-letter keys (step, continue, save, …) work; `/` comes back.
- `ctrl+r` / `F5` re-runs the last question from anywhere.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "submit", "Run", id="query.submit", tooltip="Run the question (any number of lines)"),
        Binding("ctrl+j,shift+enter", "newline", "New line", id="query.newline",
                tooltip="Start a new line in the question"),
        Binding("escape", "screen.leave_query", "Leave box", id="query.leave", tooltip="Move focus to the timeline"),
    ]

    def __init__(self, *, placeholder: str = PLACEHOLDER, id: str | None = None) -> None:
        super().__init__(
            id=id, placeholder=placeholder, soft_wrap=True, tab_behavior="focus",
            show_line_numbers=False, highlight_cursor_line=False,
        )

    @property
    def value(self) -> str:
        return self.text

    @value.setter
    def value(self, text: str) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end)

    @property
    def single_line(self) -> bool:
        """At most one non-blank line: Enter runs it (a trailing newline from a paste does not count)."""
        return sum(1 for line in self.text.splitlines() if line.strip()) <= 1

    async def _on_key(self, event: events.Key) -> None:
        # Runs before TextArea._on_key (Textual dispatches down the MRO; prevent_default skips it).
        # The box's own keys are handled here, in its message queue, rather than by the app's
        # binding lookup after the key bubbles up: typed ahead (a paste without bracketed paste,
        # tmux send-keys) the next characters would otherwise land before the new line.
        if self.read_only:
            return
        action = None
        if event.key == "enter" and self.single_line:
            action = "submit"
        elif not event.is_printable:
            active = self.screen.active_bindings.get(event.key)  # the keymap applied
            if active is not None and active.node is self and active.binding.action in ("submit", "newline"):
                action = active.binding.action
        if action is not None:
            event.stop()
            event.prevent_default()
            self.action_submit() if action == "submit" else self.action_newline()

    def action_submit(self) -> None:
        self.post_message(QuerySubmitted(self.text))

    def action_newline(self) -> None:
        if self.read_only or self.disabled:
            return
        self.replace("\n", *self.selection, maintain_selection_offset=False)
