"""The one place the explorer holds its session: the KB it has open (or the `NullSession` standing in
while it loads, after it failed, or in a replay), the caller it reads the KB as, and the KB's health
as that caller last saw it. The KB lifecycle replaces the session and moves the caller to a new day;
everything else reads them here, so a reload is seen by all at once."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from core.kb.health import Health
from core.units import Caller
from mrptui.session_seam import SessionLike

T = TypeVar("T")
D = TypeVar("D")


class OpenKB:
    def __init__(self, session: SessionLike, caller: Caller, failed: Callable[[str, str], None]) -> None:
        """`failed(title, text)`: show why a session call failed (the app's error modal)."""
        self.session = session
        self.caller = caller
        self.health: Health | None = None
        self._failed = failed

    def call(self, what: str, call: Callable[[SessionLike], T], default: D) -> T | D:
        """`call(session)` from the UI thread; a failure is shown (titled `session.WHAT failed`) and
        gives `default`, so a failing session never crashes the app."""
        try:
            return call(self.session)
        except Exception as exc:  # noqa: BLE001 - the app must survive a failing session call
            self._failed(f"session.{what} failed", f"{type(exc).__name__}: {exc}")
            return default
