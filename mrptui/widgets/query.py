"""The question box: a small TextArea. Enter runs a one-line question; ctrl+s runs any question."""

from __future__ import annotations

from typing import ClassVar

from textual import events, on
from textual.binding import Binding, BindingType
from textual.widgets import TextArea

from mrptui.history import QuestionHistory, history_path
from mrptui.messages import QuerySubmitted

PLACEHOLDER = "Ask a question — Enter runs it · ctrl+j new line · ctrl+s runs several lines · Esc leaves the box"
# Shorter hints for a narrower box, longest first: the box shows the longest that fits whole, so
# 80 columns never read a hint cut off after "runs several lines ·".
NARROWER_PLACEHOLDERS = (
    "Ask a question — Enter runs it · ctrl+j new line · Esc leaves the box",
    "Ask a question — Enter runs it · Esc leaves the box",
    "Ask a question — Enter runs it",
)


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
- **ctrl+u** clears the whole question, however many lines it has.
- **↑** on the first line / **↓** on the last line walk the question history, which is kept across
  sessions (`$XDG_DATA_HOME/mrptui/history`, or the file `$MRPTUI_HISTORY` names); ↓ past the
  newest entry brings back what you were typing.
- **ctrl+r** searches the history for what is in the box; press it again for older matches.
- **F7** selects the whole question (then typing replaces it).
- The box keeps focus after Enter, and the question stays selected: the next one you type replaces it.
  Every printable key types; commands are F-keys (F10 step, shift+F10 back, F9 continue, F11 next
  stage, F5 re-run), alt chords (alt+n, alt+d, alt+s, …) and the palette (ctrl+p).
- **Escape** leaves the box so the single-letter keys (step, continue, save, …) work; `/` or ctrl+l
  comes back, and whatever you type after `/` lands in the box.
- `F5` (and `ctrl+r` outside the box) re-runs the last question.
"""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "submit", "Run", id="query.submit", tooltip="Run the question (any number of lines)"),
        Binding(
            "ctrl+j,shift+enter", "newline", "New line", id="query.newline", tooltip="Start a new line in the question"
        ),
        Binding("ctrl+u", "clear_question", "Clear", id="query.clear", tooltip="Clear the whole question"),
        Binding(
            "ctrl+r",
            "search_history",
            "History",
            id="query.search",
            tooltip="Search the question history for the text in the box (again: older matches)",
        ),
        Binding(
            "f7", "select_all", "Select all", show=False, id="query.select_all", tooltip="Select the whole question"
        ),
        Binding("escape", "screen.leave_query", "Leave box", id="query.leave", tooltip="Move focus to the timeline"),
    ]

    def __init__(self, *, placeholder: str = PLACEHOLDER, id: str | None = None) -> None:
        super().__init__(
            id=id,
            placeholder=placeholder,
            soft_wrap=True,
            tab_behavior="focus",
            show_line_numbers=False,
            highlight_cursor_line=False,
        )
        self.questions = QuestionHistory(None)
        self._walk: int | None = None  # index into the history being shown, None when not walking
        self._draft = ""  # what was typed before the walk began
        self._shown = ""  # the text the walk put in the box: any edit ends the walk
        self._search: tuple[str, int] | None = None  # (term, index of the match shown)
        self._mounted_at = float("inf")
        # Only the default hint has shorter forms.
        self._placeholders = (placeholder, *NARROWER_PLACEHOLDERS) if placeholder == PLACEHOLDER else (placeholder,)

    # A handler of its own name: ScrollView's `on_mount` takes no event, and this one reads the
    # event's time.
    @on(events.Mount)
    def _load_history(self, event: events.Mount) -> None:
        self.questions = QuestionHistory(history_path())
        self._mounted_at = event.time

    def on_resize(self, event: events.Resize) -> None:
        room = self.scrollable_content_region.width - 1  # the cursor's cell after the text
        self.placeholder = next((hint for hint in self._placeholders if len(hint) <= room), self._placeholders[-1])

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
        # tmux send-keys) the characters behind the key are already in this queue, so they would
        # land before the new line, or be typed and then wiped by ctrl+u's clear.
        if self.read_only:
            return
        if event.key.startswith("alt+"):
            # alt+letter arrives with its letter as the character: it is a command chord, never text.
            event.prevent_default()
            return
        action = None
        if event.key in ("up", "down") and self._history_key(event.key):
            event.stop()
            event.prevent_default()
            return
        if event.key == "enter" and self.single_line:
            action = "submit"
        elif event.key == "ctrl+j" and self.single_line and event.time < self._mounted_at:
            # Typed ahead while the program started: the terminal was still in cooked mode, whose
            # ICRNL turned Enter's CR into LF as the keys arrived, so Enter reads as ctrl+j. No one
            # presses ctrl+j before the box is on the screen.
            action = "submit"
        elif not event.is_printable:
            action = self._own_action(event.key)
        if action is not None:
            event.stop()
            event.prevent_default()
            await self.run_action(action)

    def _own_action(self, key: str) -> str | None:
        """The box's own action `key` is bound to (the keymap applied), if any. Actions of another
        namespace (escape's `screen.leave_query`) move the focus, not the text: they bubble as usual."""
        active = self.screen.active_bindings.get(key)
        if active is None or active.node is not self or not active.enabled or "." in active.binding.action:
            return None
        return active.binding.action

    def action_submit(self) -> None:
        question = normalise_question(self.text)
        if question:
            self.questions.add(question)
            if self.questions.error:
                self.notify(self.questions.error, severity="warning")
                self.questions.error = ""
        self._end_walk()
        self.post_message(QuerySubmitted(self.text))
        # The box keeps focus; the question stays selected, so the next one typed replaces it.
        self.select_all()

    # -- history ----------------------------------------------------------------------------

    def _walking(self) -> bool:
        return self._walk is not None and self.text == self._shown

    def _end_walk(self) -> None:
        self._walk, self._search = None, None
        self.border_subtitle = ""

    def _show_entry(self, text: str, walk: int | None, note: str) -> None:
        self.value = text
        self._shown, self._walk = text, walk
        self.border_subtitle = note

    def _history_key(self, key: str) -> bool:
        """↑ on the first line goes back in the history, ↓ on the last line forward; True if it did."""
        row = self.cursor_location[0]
        if key == "up" and row == 0:
            return self.history_back()
        if key == "down" and row == self.document.line_count - 1 and self._walking():
            return self.history_forward()
        return False

    def history_back(self) -> bool:
        entries = self.questions.entries
        if not self._walking():
            self._draft, self._walk, self._search = self.text, len(entries), None
        if not self._walk:
            return False
        index = self._walk - 1
        self._show_entry(entries[index], index, f"history {index + 1}/{len(entries)}")
        return True

    def history_forward(self) -> bool:
        index = (self._walk or 0) + 1
        if index >= len(self.questions.entries):
            self.value = self._draft
            self._end_walk()
        else:
            self._show_entry(self.questions.entries[index], index, f"history {index + 1}/{len(self.questions.entries)}")
        return True

    def action_search_history(self) -> None:
        if self._search is not None and self._walking():
            term, before = self._search
        else:
            term, before = self.text.strip(), len(self.questions.entries)
            self._draft = self.text
        found = self.questions.search(term, before)
        if found is None:
            self.border_subtitle = f"no older question contains “{term}”" if term else "the history is empty"
            return
        self._show_entry(
            self.questions.entries[found], found, f"search “{term}”: {found + 1}/{len(self.questions.entries)}"
        )
        self._search = (term, found)

    def action_clear_question(self) -> None:
        if self.read_only or self.disabled:
            return
        self.clear()
        self._end_walk()

    def action_newline(self) -> None:
        if self.read_only or self.disabled:
            return
        self.replace("\n", *self.selection, maintain_selection_offset=False)
