"""The explorer's copy, save and export actions: each asks where to write (prefilled in the
exports folder, never overwriting) and says what it wrote. A mixin of ExplorerApp."""

from __future__ import annotations

from mrptui.clipboard import copy_text
from mrptui.exports import Export, answer_export, evidence_export, export_dir, trace_export, write_export
from mrptui.screens.modals import PathModal
from mrptui.widgets.evidence import EvidenceTable


class ExportActions:
    def copy_focused(self) -> None:
        node = self.screen.focused
        text = None
        while node is not None:
            copy = getattr(node, "copy_text", None)
            if callable(copy):
                text = copy()
                break
            node = node.parent  # type: ignore[assignment]
        if not text:
            self.notify("nothing to copy here", severity="warning")
            return
        copy_text(self.screen, text)

    def _export(self, export: Export | str) -> None:
        """Ask where to write `export`, then write it (or say why there is nothing to write)."""
        if isinstance(export, str):
            self.notify(export, severity="warning")
            return
        folder = export_dir()

        def done(path: str | None) -> None:
            if not path:
                return
            try:
                written = write_export(export, path, folder)
            except OSError as exc:  # UnsafePath (a folder, device, link or KB file) says why itself
                self.notify(f"not written: {exc.strerror or exc}", severity="error")
                return
            self.notify(written, timeout=8)

        self.push_screen(PathModal(export.title, export.default_path(folder)), callback=done)

    def save_trace(self) -> None:
        self._export(trace_export(self.current, self.session.owns_file))

    def export_csv(self) -> None:
        self._export(evidence_export(self.current, self.main.query_one(EvidenceTable).current, self.session.owns_file))

    def export_markdown(self) -> None:
        self._export(answer_export(self.current, self.cursor, self.session.owns_file))
