"""Warming the open KB's indexes, none of it on the UI thread: BM25 and ThinkingDB first, then HDC
(and HDC again for a reloaded view), then the part-of-speech tags; again for each new caller's view
(ctrl+g, a new day), so its first question does not build them. `KBLifecycle` starts them; the
workers report with `KBWork` messages, naming the caller they built for, that the app hands back
to `work`.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.app import App
from textual.worker import WorkerState, get_current_worker

from core.units import Caller, CallerKey
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
        """The session is open, or the caller changed: warm the caller's indexes in a worker. A
        warm-up for a caller since replaced is cancelled (its tagging stops; an index it is
        building is finished, and kept for that caller, but reports nothing)."""
        self._indexing_since = self.options.clock()
        self._set(indexing=True, hdc="")  # a replaced caller's HDC build or failure is not this one's
        caller = self.kb.caller
        self.app.run_worker(
            lambda: self._warm_up(caller),
            thread=True,
            group=WARM_UP_GROUP,
            exclusive=True,
            description="Preparing the indexes",
            exit_on_error=False,
        )

    def _warm_up(self, caller: Caller) -> None:
        """BM25 and ThinkingDB first (every question needs them), then HDC, off the critical path."""
        kb = self.kb
        kb.session.warm_up(caller)
        self.app.post_message(KBWork("indexes_ready", caller.key))
        if not kb.session.hdc_ready(caller):
            self._build_hdc("hdc_ready", caller)
        # Last and slowest: the KB's part-of-speech tags into the index store (core/nlp/tag_store.py),
        # resting between slices and waiting while a question runs (a held one uses no CPU), so
        # the question and the keys pressed meanwhile keep the interpreter's lock (issue 25).
        worker = get_current_worker()
        cancelled = lambda: worker.is_cancelled  # noqa: E731
        kb.session.warm_up_tags(caller, cancelled=cancelled, busy=self._busy, pause=lambda: self._pause(cancelled))

    def _rebuild_hdc(self) -> None:
        """After a reload: quiet unless it fails (a toast after every saved edit would be noise)."""
        self._build_hdc("hdc_rebuilt", self.kb.caller)

    def _build_hdc(self, done: KBWorkName, caller: Caller) -> None:
        session, post = self.kb.session, self.app.post_message
        post(KBWork("hdc_building", caller.key))
        try:
            session.warm_up_hdc(caller)
        except Exception:
            post(KBWork("hdc_failed", caller.key))
            raise
        if session.hdc_ready(caller):  # else a newer reload's rebuild is under way and will say so
            post(KBWork(done, caller.key))

    def work(self, what: KBWorkName, caller: CallerKey | None = None) -> None:
        if caller is not None and caller != self.kb.caller.key:
            return  # built for a caller since replaced: the new caller's warm-up reports for itself
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
        elif group == WARM_UP_GROUP and not self._warming():
            self._set(indexing=False, hdc="failed" if hdc == "building" else hdc)

    def _warming(self) -> bool:
        """A warm-up is still under way: the one a new caller's replaced ended, not this one."""
        return any(
            worker.group == WARM_UP_GROUP and worker.state in (WorkerState.PENDING, WorkerState.RUNNING)
            for worker in self.app.workers
        )

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
