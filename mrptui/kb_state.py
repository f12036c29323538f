"""Where the explorer's KB is in its life: loading, failed to load, or ready (and, once ready,
whether its indexes, HDC index or a reload are still being built). A pure value: the status line
and the loading banner render it, `mrptui.kb_lifecycle` changes it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from core.infra.progress import LoadProgress

Phase = Literal["loading", "failed", "ready"]


@dataclass(frozen=True)
class KBState:
    """Where the explorer's KB is in its load, index and reload, as the status bar shows it."""

    phase: Phase = "ready"
    progress: LoadProgress | None = None  # the last progress the load reported
    error: str = ""  # why the load failed, one line per problem (file:line:col first)
    indexing: bool = False  # BM25 and ThinkingDB being built for the caller
    hdc: Literal["", "building", "failed"] = ""
    reloading: bool = False
    queued: str = ""  # a question asked while loading, run when the KB is ready
    cluster: str = ""  # the cluster the KB's shards are searched on: "cluster local:2 · 4 shards"

    @property
    def loading(self) -> bool:
        return self.phase == "loading"

    @property
    def failed(self) -> bool:
        return self.phase == "failed"


def progress_text(progress: LoadProgress | None) -> str:
    """ "3/20 files", "building segments: 3/15 files · ~12 s left", …: what a load has done and
    how long it should still take. Never the units read: they include units outside the
    caller's view, whose number is the author's business."""
    if progress is None or progress.stage == "scanning":
        return f"finding files ({progress.total} found)" if progress and progress.total else "finding files"
    if progress.stage == "preparing":
        return f"{progress.total}/{progress.total} files · preparing rules and plugins"
    done = f"{progress.done}/{progress.total} files" + _left(progress.left)
    return f"building segments: {done}" if progress.stage == "building" else done


def _left(seconds: int | None) -> str:
    """ " · ~40 s left", " · ~3 min left"; nothing before the load has a rate to go by."""
    if seconds is None:
        return ""
    if seconds < 90:
        return f" · ~{seconds} s left"
    return f" · ~{round(seconds / 60)} min left"
