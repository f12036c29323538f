"""The explorer's KB lifecycle, none of it on the UI thread: open the session after the first
frame (reporting progress file by file), warm the caller's indexes, build HDC, then poll the
files and reload them. Each step's state is a `KBState` the status line and loading banner render.

Workers report with messages (`post_message` never waits, so a worker cannot hang on an app that
is quitting); the app hands them to this object. Quitting cancels the load worker, and the
progress callback raises `Cancelled` at the next file, so the load thread ends within one file.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import replace

from textual.app import App
from textual.worker import WorkerState, get_current_worker

from core.infra.cancel import Cancelled
from core.infra.collector import keep_out_of_collections
from core.infra.config import ConfigError, OverBudget
from core.infra.diagnostics import Code, Diagnostic
from core.infra.progress import LoadProgress, Progress
from core.kb.health import DETAILS_HINT, Health, counts_phrase
from core.kernel.contract import Request
from core.units import CallerKey
from mrptui.cluster_link import ClusterLink
from mrptui.kb_indexes import KBIndexes
from mrptui.kb_state import KBState, progress_text
from mrptui.messages import KBLoadFailed, KBLoadProgressed, KBOpened, KBReloaded, KBWork, KBWorkName
from mrptui.open_kb import OpenKB
from mrptui.options import ExplorerOptions
from mrptui.session_seam import NullSession, SessionLike

Opener = Callable[[Progress], SessionLike]
"""Opens the session, reporting progress (e.g. `partial(Session.open, paths, config)` as `progress=`)."""

LOAD_GROUP = "kb-load"
RELOAD_GROUP = "reload"
LOADING_REASON = "the KB is still loading"


def quiet_gc() -> None:
    """Collect, then move every object alive now (the KB and its indexes above all) out of the
    cyclic garbage collector's reach. With a large KB a full collection walks millions of objects and
    stops the UI for hundreds of milliseconds, whichever thread triggers it; once they are frozen,
    collections walk only newer objects. Frozen objects are still freed by reference counting; the
    app calls this once per KB (at start, and after the first run on a KB, which builds its indexes),
    so cyclic garbage frozen with them is bounded."""
    keep_out_of_collections()


def load_problems(error: Exception) -> tuple[Diagnostic, ...]:
    """Why opening failed, with file and line where the error knows them."""
    if isinstance(error, ConfigError):
        return tuple(error.diagnostics)
    if isinstance(error, OSError):
        return (
            Diagnostic(
                code=Code.FILE_UNREADABLE, message=error.strerror or str(error), file=str(error.filename or "<kb>")
            ),
        )
    return (Diagnostic(code=Code.FILE_UNREADABLE, message=f"{type(error).__name__}: {error}", file="<kb>"),)


def reload_problems(health: Health | None) -> str:
    """What a reload's errors are and what they do, by where they are (the health summary's parts:
    a broken rules file runs the last good rules and withdraws no unit), for its notification."""
    if health is None or not health.errors:
        return ""
    problems = health.summary.removesuffix(f" — {DETAILS_HINT}")
    if health.kb_errors:
        return f"{problems}; units that fail are withdrawn until fixed (see KB screen)"
    return f"{problems} — F8 lists them"


class KBLifecycle:
    """Loads, warms, polls and reloads the app's session (held in `kb`); `state` says where it is."""

    def __init__(
        self,
        app: App,
        kb: OpenKB,
        opener: Opener | None,
        options: ExplorerOptions,
        cluster: ClusterLink | None = None,
        *,
        busy: Callable[[], bool],
        pause: Callable[[Callable[[], bool]], None],
        changed: Callable[[], None],
        new_view: Callable[[], None],
    ) -> None:
        """`app`: runs the workers and shows the notifications. `busy`: a question is running (the
        tagging warm-up waits meanwhile). `pause(cancelled)`: the UI's pause point (mrptui/ui_first.py),
        called by the tagging warm-up between sentences. `changed`: `state` changed. `new_view`: the caller's view
        changed (a new day), so open screens re-read it. `cluster`: the cluster the KB's shards
        are searched on (`--cluster`), attached after each open and reload, in their workers."""
        self.app = app
        self.kb = kb
        self.opener = opener
        self.options = options
        self._changed = changed
        self._new_view = new_view
        self.cluster = cluster
        self.state = KBState(
            phase="loading" if opener is not None else "ready", cluster=cluster.label if cluster else ""
        )
        self.fingerprint = ""
        self.queued: Request | None = None
        self.indexes = KBIndexes(app, kb, options, state=lambda: self.state, update=self._set, busy=busy, pause=pause)
        # The caller's as-of date follows the calendar when the flags did not fix one (`--as-of`).
        self.follow_today = False
        self.today: Callable[[], dt.date] = dt.date.today

    # -- opening -----------------------------------------------------------------------------

    def start(self) -> None:
        """From the app's mount: open the session in a worker, or, given one, go straight on."""
        if self.opener is None:
            self.fingerprint = self._safe_fingerprint()
            self._ready()
            return
        self._set(phase="loading", progress=None, error="")
        self.app.run_worker(
            self._load, name="kb-load", group=LOAD_GROUP, description="Opening the KB", thread=True, exit_on_error=False
        )

    def stop(self) -> None:
        """The app quits: the load stops at its next file (the thread cannot be interrupted mid-file),
        and the cluster is closed (a local one's worker processes stop)."""
        for worker in self.app.workers:
            if worker.group == LOAD_GROUP:
                worker.cancel()
        if self.cluster is not None:
            self.cluster.close()

    def _load(self) -> None:
        worker = get_current_worker()
        opener = self.opener
        assert opener is not None

        last: list[LoadProgress] = []

        def progress(update: LoadProgress) -> None:
            if worker.is_cancelled:
                raise Cancelled("the explorer quit while the KB was loading")
            if last != [update]:  # the build pool repeats itself a few times a second
                last[:] = [update]
                self.app.post_message(KBLoadProgressed(update))

        try:
            session = opener(progress)
            if self.cluster is not None and not worker.is_cancelled:
                self.cluster.attach(session)
            fingerprint = session.fingerprint()
        except Cancelled:
            return
        except Exception as error:  # noqa: BLE001 - shown in the app, never a traceback on the terminal
            self.app.post_message(KBLoadFailed(load_problems(error)))
            return
        if not worker.is_cancelled:
            quiet_gc()  # here, not on the UI thread: the loading banner is still up meanwhile
            self.app.post_message(KBOpened(session, fingerprint))

    def progressed(self, progress: LoadProgress) -> None:
        if self.state.loading:
            self._set(progress=progress)

    def opened(self, session: SessionLike, fingerprint: str) -> None:
        """The load worker opened the session (the app then re-reads it and runs `take_queued()`)."""
        self.kb.session = session
        self.fingerprint = fingerprint
        self._set(phase="ready", progress=None, cluster=self.cluster.label if self.cluster else "")
        self._ready()

    def failed(self, problems: tuple[Diagnostic, ...]) -> None:
        reason = "\n".join(d.format() for d in problems) or "the KB could not be opened"
        self.kb.session = NullSession(reason=f"the KB did not load: {reason}", problems=problems)
        self._set(phase="failed", error=reason, progress=None, reloading=False)
        if self.queued is not None:
            self.queued = None
            self.app.notify("the queued question was not run: the KB did not load", severity="error")
        self.app.notify(
            f"KB not loaded: {reason.splitlines()[0]} — fix it and press ctrl+r (F8 lists every problem)",
            severity="error",
            timeout=12,
        )

    def _ready(self) -> None:
        """The session is open: poll its files and warm its indexes."""
        if self.options.poll_interval > 0:
            self.app.set_interval(self.options.poll_interval, self.poll, name="poll")
        self.indexes.warm()

    # -- questions asked while loading -------------------------------------------------------

    def queue(self, request: Request) -> None:
        """A question asked before the KB is ready runs when it is (a newer one replaces it)."""
        self.queued = request
        self._set(queued=request.question)
        self.app.notify(
            f"{LOADING_REASON} ({progress_text(self.state.progress)}): your question runs as soon as it is ready",
            timeout=6,
        )

    def take_queued(self) -> Request | None:
        """The question asked while the KB loaded, to run now that it is open."""
        request, self.queued = self.queued, None
        self._set(queued="")
        return request

    def refuse_while_loading(self, what: str, *, needs_engine: bool = False) -> bool:
        """Whether `what` must wait for the KB (it says so). `needs_engine`: nor can it open after a
        failed load (the KB screen can: it lists why the load failed)."""
        if self.state.loading:
            self.app.notify(
                f"{LOADING_REASON} ({progress_text(self.state.progress)}): {what} opens when it is ready",
                severity="warning",
            )
        elif self.state.failed and needs_engine:
            self.app.notify(
                f"the KB did not load, so {what} cannot run: F8 lists why, ctrl+r tries again", severity="error"
            )
            return True
        return self.state.loading

    # -- indexes (`KBIndexes`) -------------------------------------------------------------

    def work(self, what: KBWorkName, caller: CallerKey | None = None) -> None:
        if what == "reloading":
            self._set(reloading=True)
        else:
            self.indexes.work(what, caller)

    def new_caller(self) -> None:
        """The caller changed (ctrl+g, a new day): build the new view's indexes now, in a worker,
        rather than during its first question. Before the KB is open, opening warms them."""
        if self.state.phase == "ready":
            self.indexes.warm()

    def worker_ended(self, group: str, state: WorkerState) -> None:
        """A warm-up or reload worker that raised leaves no 'building…' behind."""
        if state not in (WorkerState.ERROR, WorkerState.CANCELLED):
            return
        if group == RELOAD_GROUP:
            self._set(reloading=False)
        else:
            self.indexes.worker_ended(group, state)

    # -- polling and reloading ---------------------------------------------------------------

    def _safe_fingerprint(self) -> str:
        try:
            return self.kb.session.fingerprint()
        except Exception:  # noqa: BLE001 - a failing stat must not stop the app; retry next tick
            return self.fingerprint

    def _reload_busy(self) -> bool:
        return any(
            worker.group == RELOAD_GROUP and worker.state in (WorkerState.PENDING, WorkerState.RUNNING)
            for worker in self.app.workers
        )

    def poll(self) -> None:
        """Every poll interval (and after the editor): reload, in a worker, if any file changed."""
        self._follow_today()
        if self.state.phase == "ready" and not self._reload_busy():
            self._start_reload(forced=False)

    def _follow_today(self) -> None:
        """An explorer left open past midnight asks as of the new day: a unit whose EffectiveTo has
        passed leaves the view then, as it would for a fresh `mrptui` (fail closed)."""
        today = self.today()
        if self.follow_today and self.kb.caller.as_of != today:
            self.kb.caller = self.kb.caller.model_copy(update={"as_of": today})
            self._new_view()
            self.new_caller()
            self.app.notify(f"a new day: the KB is now read as of {today.isoformat()}")

    def reload(self) -> None:
        """The reload key: reload now; after a failed load, try opening the KB again."""
        if self.state.loading:
            self.app.notify(f"{LOADING_REASON} ({progress_text(self.state.progress)})", severity="warning")
        elif self.state.failed:
            self.start()
        else:
            self._set(reloading=True)
            self._start_reload(forced=True)

    def _start_reload(self, *, forced: bool) -> None:
        self.app.run_worker(
            lambda: self._reload(forced),
            name="reload",
            group=RELOAD_GROUP,
            description="KB reload",
            exclusive=True,
            thread=True,
            exit_on_error=False,
        )

    def _reload(self, forced: bool) -> None:
        """Stat the files (cheap, but not on the UI thread: a big KB has many) and reload if they
        changed. The session keeps last-good units of a broken file and fails closed (core/kernel/session.py)."""
        fingerprint = self._safe_fingerprint()
        if fingerprint == self.fingerprint and not forced:
            return
        self.fingerprint = fingerprint
        if not forced:
            self.app.post_message(KBWork("reloading"))
        session, caller = self.kb.session, self.kb.caller
        had_hdc = session.hdc_ready(caller)
        try:
            session.reload()
        except OverBudget as refused:
            # The KB grew past a whole-KB budget: it is refused as an open would be. Serving the
            # last good KB instead could keep units an edit since restricted (fail closed).
            self.app.post_message(KBLoadFailed(tuple(refused.diagnostics)))
            return
        if self.cluster is not None:  # the reloaded KB is cut into new shards (its version changed)
            self.cluster.attach(session)
        health = session.health(caller)
        errors = health.errors if health is not None else 0
        self.app.post_message(KBReloaded(errors=errors, hdc_was_ready=had_hdc, problems=reload_problems(health)))

    def reloaded(self, errors: int, rerun: str, *, rebuild_hdc: bool, problems: str = "") -> None:
        self._set(reloading=False)
        self.indexes.reloaded(rebuild_hdc=rebuild_hdc)
        if errors:
            self.app.notify(
                f"KB files changed: {problems or counts_phrase(errors, 0)}{rerun}",
                severity="warning",
                timeout=8,
            )
        else:
            self.app.notify(f"KB reloaded{rerun}", timeout=6)

    # -- state -------------------------------------------------------------------------------

    def _set(self, **changes: object) -> None:
        self.state = replace(self.state, **changes)  # type: ignore[arg-type]
        self._changed()
