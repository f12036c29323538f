"""What the KB's workers report once the session changed, handed on to those it concerns: an
opened session (its health read as the caller, a question queued while it loaded run) and a
reload (the health re-read, the panes re-rendered, a notification saying how to re-run)."""

from __future__ import annotations

from collections.abc import Callable

from mrptui.focus_model import FocusModel
from mrptui.kb_health import KBHealth
from mrptui.kb_lifecycle import KBLifecycle
from mrptui.messages import KBOpened, KBReloaded
from mrptui.run_driver import RunDriver


class KBReports:
    def __init__(
        self,
        lifecycle: KBLifecycle,
        health: KBHealth,
        runner: RunDriver,
        focus: FocusModel,
        new_view: Callable[[], None],
    ) -> None:
        """`focus`: how to re-run from where the focus is. `new_view`: the caller's view changed
        (open screens re-read it)."""
        self.lifecycle, self.health, self.runner, self.focus, self._new_view = (
            lifecycle,
            health,
            runner,
            focus,
            new_view,
        )

    def opened(self, message: KBOpened) -> None:
        self.lifecycle.opened(message.session, message.fingerprint)
        self._new_view()
        self.health.refresh(banner=not self.runner.control.runs)
        queued = self.lifecycle.take_queued()
        if queued is not None:
            self.runner.start_run(queued)

    def reloaded(self, message: KBReloaded) -> None:
        self.health.refresh()
        self.runner.refresh_view()
        self._new_view()
        rerun = f" · {self.focus.rerun_hint()}" if self.runner.control.last_request is not None else ""
        self.lifecycle.reloaded(message.errors, rerun, rebuild_hdc=message.hdc_was_ready, problems=message.problems)
