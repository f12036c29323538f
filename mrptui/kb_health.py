"""The KB's health as the explorer's caller sees it: read from the session when the KB opens, reloads
or is first shown, kept in `OpenKB.health` (the status line's counts), shown on the main screen's
banner until the first answer, and each index-cache note told once."""

from __future__ import annotations

from textual.app import App

from mrptui.open_kb import OpenKB
from mrptui.screens.main import MainScreen


class KBHealth:
    def __init__(self, app: App, kb: OpenKB, main: MainScreen) -> None:
        """`app`: shows the notifications."""
        self.app, self.kb, self.main = app, kb, main
        self._cache_notes_told: set[str] = set()

    def refresh(self, *, banner: bool = True) -> None:
        # The caller's counts: the whole KB's problems are F8's (an author surface).
        self.kb.health = self.kb.call("health", lambda session: session.health(self.kb.caller), None)
        self.main.show_health(self.kb.health if banner else None)
        for note in self.kb.health.cache_notes if self.kb.health is not None else ():
            if note not in self._cache_notes_told:  # a cache that cannot be written stays so: said once
                self._cache_notes_told.add(note)
                self.app.notify(note, title="index cache", severity="warning", timeout=10)
