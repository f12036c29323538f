"""The banner under the question box while the KB loads (or after it failed to): which KB, how
far the load is, and a bar over its files. It only renders a `KBState`."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.markup import escape
from textual.widgets import ProgressBar, Static

from mrptui.kb_state import KBState, progress_text


class LoadingBanner(Horizontal):
    """Hidden once the KB is ready."""

    def compose(self) -> ComposeResult:
        yield Static("", id="loading-text")
        yield ProgressBar(total=None, show_eta=False, id="loading-bar")

    def show(self, state: KBState, label: str) -> None:
        self.display = state.loading or state.failed
        self.set_class(state.failed, "-failed")
        text = self.query_one("#loading-text", Static)
        bar = self.query_one("#loading-bar", ProgressBar)
        bar.display = state.loading
        if state.failed:
            text.update(
                f"[b]✗ KB {escape(label)} not loaded[/b] · {escape(state.error.splitlines()[0])} · "
                "F8 lists every problem · ctrl+r tries again"
            )
            return
        if not state.loading:
            return
        text.update(
            f"[b]Loading KB[/b] {escape(label)} · {escape(progress_text(state.progress))} · "
            "you can type a question meanwhile"
        )
        progress = state.progress
        if progress is not None and progress.total and progress.stage != "scanning":
            bar.update(total=progress.total, progress=progress.done)
