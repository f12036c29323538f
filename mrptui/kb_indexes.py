"""Warming the open KB's indexes, none of it on the UI thread: BM25 and ThinkingDB first, then HDC
(and HDC again for a reloaded view), then the part-of-speech tags. `KBLifecycle` starts them; the
workers report with `KBWork` messages the app hands back to `work`.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.app import App
from textual.worker import WorkerState, get_current_worker

from mrptui.kb_state import KBState
from mrptui.messages import KBWork, KBWorkName
from mrptui.open_kb import OpenKB
from mrptui.options import ExplorerOptions

WARM_UP_GROUP = "warm-up"
HDC_GROUP = "hdc-rebuild"
# Index builds shorter than this pass unremarked; longer ones end with an "indexes ready" (or
# "HDC index ready") toast.
SLOW_SECONDS = 1.0


class KBIndexes:
    """Builds the session's indexes in workers and keeps `KBState`'s indexing and HDC fields."""

    def __init__(
        self,
        app: App,
        kb: OpenKB,
        options: ExplorerOptions,
        *,
        state: Callable[[], KBState],
        update: Callable[..., None],
        busy: Callable[[], bool],
        pause: Callable[[Callable[[], bool]], None],
    ) -> None:
        """`state`: the KB's state now; `update(**changes)`: change it. `busy` and `pause`: as for
        `KBLifecycle`."""
        self.app = app
        self.kb = kb
        self.options = options
        self._state = state
        self._set = update
        self._busy = busy
        self._pause = pause
        self._indexing_since = 0.0
        self._hdc_since = 0.0

    def warm(self) -> None:
        """The session is open: warm its indexes in a worker."""
        self._indexing_since = self.options.clock()
        self._set(indexing=True)
        self.app.run_worker(
            self._warm_up, thread=True, group=WARM_UP_GROUP, description="Preparing the indexes", exit_on_error=False
        )

    def _warm_up(self) -> None:
        """BM25 and ThinkingDB first (every question needs them), then HDC, off the critical path."""
        kb = self.kb
        kb.session.warm_up(kb.caller)
        self.app.post_message(KBWork("indexes_ready"))
        if not kb.session.hdc_ready(kb.caller):
            self._build_hdc("hdc_ready")
        # Last and slowest: the KB's part-of-speech tags into the index store (core/nlp/tag_store.py),
        # resting between slices and waiting while a question runs (a held one uses no CPU), so
        # the question and the keys pressed meanwhile keep the interpreter's lock (issue 25).
        worker = get_current_worker()
        cancelled = lambda: worker.is_cancelled  # noqa: E731
        kb.session.warm_up_tags(kb.caller, cancelled=cancelled, busy=self._busy, pause=lambda: self._pause(cancelled))

    def _rebuild_hdc(self) -> None:
        """After a reload: quiet unless it fails (a toast after every saved edit would be noise)."""
        self._build_hdc("hdc_rebuilt")

    def _build_hdc(self, done: KBWorkName) -> None:
        session, caller, post = self.kb.session, self.kb.caller, self.app.post_message
        post(KBWork("hdc_building"))
        try:
            session.warm_up_hdc(caller)
        except Exception:
            post(KBWork("hdc_failed"))
            raise
        if session.hdc_ready(caller):  # else a newer reload's rebuild is under way and will say so
            post(KBWork(done))

    def work(self, what: KBWorkName) -> None:
        if what == "indexes_ready":
            self._set(indexing=False)
            took = self.options.clock() - self._indexing_since
            if took >= SLOW_SECONDS:
                self.app.notify(f"indexes ready ({took:.1f} s): questions answer at full speed", timeout=4)
        elif what == "reloading":
            self._set(reloading=True)
        else:
            if what == "hdc_building":
                self._hdc_since = self.options.clock()
            self._set(hdc={"hdc_building": "building", "hdc_failed": "failed"}.get(what, ""))
            took = self.options.clock() - self._hdc_since
            if what == "hdc_ready" and took >= SLOW_SECONDS:  # a small KB's HDC is ready unremarked
                self.app.notify(f"HDC index ready ({took:.1f} s)", timeout=4)

    def worker_ended(self, group: str, state: WorkerState) -> None:
        """A warm-up or HDC worker that raised or was cancelled leaves no 'building…' behind."""
        hdc = self._state().hdc
        if group == HDC_GROUP:
            # Cancelled: a newer reload started its own rebuild, which reports for itself.
            if state is WorkerState.ERROR:
                self._set(hdc="failed" if hdc == "building" else hdc)
        elif group == WARM_UP_GROUP:
            self._set(indexing=False, hdc="failed" if hdc == "building" else hdc)

    def reloaded(self, *, rebuild_hdc: bool) -> None:
        # The new view's HDC index is built now, not by the next escalated question (seconds at a
        # million units), when the old view had one or was building one (that build ends for the
        # old view and leaves the status line to this one); questions do not wait for it.
        if (rebuild_hdc or self._state().hdc == "building") and not self.kb.session.hdc_ready(self.kb.caller):
            self.app.run_worker(
                self._rebuild_hdc,
                thread=True,
                group=HDC_GROUP,
                exclusive=True,
                description="Rebuilding the HDC index",
                exit_on_error=False,
            )
