"""The one handler of the explorer's background workers ending: the KB's workers leave no
'building…' behind, and a worker that raised opens an error modal, never a crash (an engine's
failure is kept on its run, so the events before it stay browsable)."""

from __future__ import annotations

from textual.app import App
from textual.worker import Worker, WorkerState

from mrptui.kb_lifecycle import KBLifecycle
from mrptui.run_driver import RunDriver
from mrptui.screens.modals import ErrorModal


class WorkerErrors:
    def __init__(self, app: App, lifecycle: KBLifecycle, runner: RunDriver) -> None:
        """`app`: shows the error modal."""
        self.app, self.lifecycle, self.runner = app, lifecycle, runner

    def changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        self.lifecycle.worker_ended(worker.group or "", event.state)
        if event.state != WorkerState.ERROR:
            return
        message = f"{type(worker.error).__name__}: {worker.error}"
        if (worker.group or "").startswith("engine-"):
            self.runner.failed(worker.name, message)
            self.app.push_screen(ErrorModal("Engine error", message))
        else:
            self.app.push_screen(ErrorModal(f"{worker.description or 'Background task'} failed", message))
