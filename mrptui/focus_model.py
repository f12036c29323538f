"""The one focus model of every screen (docs/tui.md, "The focus model").

- Where a text box has focus, printable keys type there (the box stops them before any binding).
- Elsewhere a screen's single-letter commands run; any other printable key starts a question: the
  screens above the main one close and the key lands in the question box, so a question typed on
  the rules screen is asked, never run as a string of commands. `/` goes to the box on every screen.
- Keys that were waiting when the app suspended for the editor are dropped when it comes back: a
  question typed ahead would otherwise run as commands (every `e` opening the editor again).
"""

from __future__ import annotations

from weakref import WeakKeyDictionary

from textual import events
from textual.app import App
from textual.dom import DOMNode

from mrptui.keys_in_force import types_text
from mrptui.navigator import Navigator
from mrptui.screens.main import MainScreen
from mrptui.widgets.query import QueryBox


class FocusModel:
    def __init__(self, app: App, navigator: Navigator, main: MainScreen) -> None:
        self.app, self.navigator, self.main = app, navigator, main
        self.dropping = False  # between the editor's return and `caught_up`: keys are stale
        # A key a binding takes where it arrives, with that binding: its binding is looked up again
        # only when it has bubbled back to the app, and a question started by a key behind it may
        # have moved the focus to the box by then.
        self.commands: WeakKeyDictionary[events.Key, tuple[DOMNode, str]] = WeakKeyDictionary()

    def resumed(self) -> None:
        """The app came back from a suspend: drop every key already queued (a FIFO: those before
        the callback queued now), whatever the clock says."""
        self.dropping = True
        self.app.call_later(self.caught_up)

    def caught_up(self) -> None:
        self.dropping = False

    def arrived(self, event: events.Key) -> bool:
        """A key as the app receives it; True when handled here (dropped, or a question started).
        Decided in the order keys arrive, before the key is handed to a screen: the keys behind it
        then go to the box, never into a screen this one closes."""
        if self.dropping:
            return True  # typed before the editor returned
        if event.is_forwarded or not self.takes(event) or types_text(self.app.focused):
            return False
        active = self.app.screen.active_bindings.get(event.key)
        if active is None:  # printable, no text box has focus and no binding of the screen takes it
            if event.key == "slash":
                return False
            self.to_question(event.character or "")
            return True
        if active.enabled:
            self.commands[event] = (active.node, active.binding.action)
        return False

    def unbound(self, event: events.Key) -> bool:
        """A key no binding took on its way back to the app; True when it went to the question.
        `/` is the key that goes to the box (a modal screen has no app bindings): not text."""
        if not self.takes(event):
            return False
        command = self.commands.pop(event, None)
        if command is not None:  # a command where it arrived: typed fast, "pump" read "umpp"
            node, action = command
            if node.is_attached:
                self.app.call_later(self.app.run_action, action, node)
            return True
        self.to_question("" if event.key == "slash" else event.character or "")
        return True

    def rerun_hint(self) -> str:
        """How to re-run the last question from where the focus is now. `r` re-runs only on the
        main screen's panels: in the question box it is typed, and on another screen or window it
        starts a question; F5 works in the box, and `/` takes you there from anywhere."""
        if self.app.screen is not self.main:
            return "press / then F5 to re-run"
        return "press F5 to re-run" if types_text(self.app.focused) else "press r to re-run"

    def takes(self, event: events.Key) -> bool:
        """Whether an unbound key goes to the question: any printable one. A text box stops the
        keys it types, so one that reaches the app was typed where no box had focus, or was on its
        way through the screen the first key of a question closed: typed ahead (a paste, a fast
        typist, tmux send-keys), the rest of the question arrives after the box took focus."""
        return bool(event.is_printable and event.character)

    def to_question(self, typed: str = "") -> None:
        """Close the screens above the main one, focus the question box and type `typed` into it
        (replacing the selected question, as typing in the box does)."""
        self.navigator.pop_secondary()
        box = self.main.query_one(QueryBox)
        self.main.set_focus(box)
        if typed and not box.read_only:
            box.replace(typed, *box.selection, maintain_selection_offset=False)
