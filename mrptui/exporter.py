"""The app's copy, save and export component: each export asks where to write (prefilled in the
exports folder, never overwriting) and says what it wrote."""

from __future__ import annotations

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
from mrptui.host import Host
from mrptui.screens.modals import PathModal
from mrptui.widgets.evidence import EvidenceTable


class Exporter:
    def __init__(self, host: Host) -> None:
        self.host = host

    def _refused(self) -> bool:
        """Whether the current run's content must stay on screen (`answered_elsewhere`), said
        as a warning. A replayed trace is the user's own file and is not checked."""
        host = self.host
        run = host.current
        if host.replay or run is None or run.request is None:
            return False
        why = answered_elsewhere(run, host.ask_session("view_version", run.request.caller))
        if why:
            host.notify(why, severity="warning", timeout=8)
        return bool(why)

    def copy_focused(self) -> None:
        screen = self.host.screen
        # Every pane that copies shows the current run, so they all stay behind its check.
        if screen is self.host.main and self._refused():
            return
        node = screen.focused
        text = None
        while node is not None:
            copy = getattr(node, "copy_text", None)
            if callable(copy):
                text = copy()
                break
            node = node.parent
        if not text:
            self.host.notify("nothing to copy here", severity="warning")
            return
        copy_text(screen, text)

    def _export(self, export: Export | str) -> None:
        """Ask where to write `export`, then write it (or say why there is nothing to write)."""
        host = self.host
        if isinstance(export, str):
            host.notify(export, severity="warning")
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
                host.notify(f"not written: {exc.strerror or exc}", severity="error")
                return
            host.notify(written, timeout=8)

        host.push_screen(PathModal(export.title, export.default_path(folder)), callback=done)

    def save_trace(self) -> None:
        self._export(trace_export(self.host.current, self.host.session.owns_file))

    def export_csv(self) -> None:
        host = self.host
        self._export(evidence_export(host.current, host.main.query_one(EvidenceTable).current, host.session.owns_file))

    def export_markdown(self) -> None:
        self._export(answer_export(self.host.current, self.host.cursor, self.host.session.owns_file))
