"""The app's copy, save and export component: each export asks where to write (prefilled in the
exports folder, never overwriting) and says what it wrote."""

from __future__ import annotations

from textual.app import App
from textual.dom import DOMNode

from mrptui.clipboard import copy_text
from mrptui.exports import (
    Export,
    answer_export,
    answered_elsewhere,
    evidence_export,
    export_dir,
    trace_export,
    write_export,
)
from mrptui.open_kb import OpenKB
from mrptui.run_control import RunControl
from mrptui.screens.main import MainScreen
from mrptui.screens.modals import PathModal
from mrptui.widgets.evidence import EvidenceTable


class Exporter:
    def __init__(self, app: App, kb: OpenKB, control: RunControl, main: MainScreen, *, replay: bool) -> None:
        """`replay`: the runs are a saved trace, the user's own file (not checked before copying)."""
        self.app, self.kb, self.control, self.main, self.replay = app, kb, control, main, replay

    def _refused(self) -> bool:
        """Whether the current run's content must stay on screen (`answered_elsewhere`), said
        as a warning. A replayed trace is the user's own file and is not checked."""
        run = self.control.current
        if self.replay or run is None or run.request is None:
            return False
        caller = run.request.caller
        why = answered_elsewhere(run, self.kb.call("view_version", lambda session: session.view_version(caller), None))
        if why:
            self.app.notify(why, severity="warning", timeout=8)
        return bool(why)

    def copy_focused(self) -> None:
        screen = self.app.screen
        # Every pane that copies shows the current run, so they all stay behind its check.
        if screen is self.main and self._refused():
            return
        node: DOMNode | None = screen.focused
        text = None
        while node is not None:
            copy = getattr(node, "copy_text", None)
            if callable(copy):
                text = copy()
                break
            node = node.parent
        if not text:
            self.app.notify("nothing to copy here", severity="warning")
            return
        copy_text(screen, text)

    def _export(self, export: Export | str) -> None:
        """Ask where to write `export`, then write it (or say why there is nothing to write)."""
        app = self.app
        if isinstance(export, str):
            app.notify(export, severity="warning")
            return
        if self._refused():
            return
        folder = export_dir()

        def done(path: str | None) -> None:
            if not path:
                return
            try:
                written = write_export(export, path, folder)
            except OSError as exc:  # UnsafePath (a folder, device, link or KB file) says why itself
                app.notify(f"not written: {exc.strerror or exc}", severity="error")
                return
            app.notify(written, timeout=8)

        app.push_screen(PathModal(export.title, export.default_path(folder)), callback=done)

    def save_trace(self) -> None:
        self._export(trace_export(self.control.current, self.kb.session.owns_file))

    def export_csv(self) -> None:
        table, run = self.main.query_one(EvidenceTable), self.control.current
        # A run's start shows the previous run's evidence, marked stale: that is not this run's to export.
        shown = table.current if run is not None and table.run == run.run_id else None
        self._export(evidence_export(run, shown, self.kb.session.owns_file))

    def export_markdown(self) -> None:
        self._export(answer_export(self.control.current, self.control.cursor, self.kb.session.owns_file))
