"""One plugin call, isolated: a thread of its own while it runs, its cancel token, its prints, and
whatever it returns or raises turned into an outcome the kernel can record (never an exception that
stops the run).

A call's thread is a worker kept between calls (`_Worker`): a question makes 4 to 11 calls, and
starting a thread for each cost ~170 µs of CPU and two waits for a core under load. A worker runs
one call at a time; one whose call the kernel abandons stays with that call and is not reused
until it returns. While it runs a call it is named `plugin-<id>`, as a thread of its own was.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

from core.infra.cancel import Cancelled, CancelToken, bound, interrupt_requested
from core.infra.config import TraceLimits
from core.kernel.contract import GsResult, KbResult, KnowledgePlugin, RunContext, SdResult, Status, ValResult
from core.kernel.events import AnswerReady
from core.kernel.output import plugin_output
from core.units import Intent

Result = SdResult | KbResult | GsResult | ValResult
R = TypeVar("R", bound=Result)
# How often a waiting kernel checks whether the user cancelled or interrupted the run.
_STOP_POLL_S = 0.02
# Idle workers kept at most (more run only while calls run side by side: an eval's workers).
MAX_IDLE_WORKERS = 4
_IDLE_NAME = "mrptui-idle-plugin-worker"


class PluginCall:
    """One call handed to a worker; joined and watched as the thread of its own it once had."""

    def __init__(self, name: str, target: Callable[[], None]) -> None:
        self.name = name
        self._target = target
        self._done = threading.Event()

    def is_alive(self) -> bool:
        return not self._done.is_set()

    def join(self, timeout: float | None = None) -> None:
        self._done.wait(timeout)

    def run(self, worker: _Worker) -> None:
        thread = threading.current_thread()
        thread.name = self.name
        try:
            self._target()
        finally:
            thread.name = _IDLE_NAME
            # Idle again before the caller hears of it, so its next call finds this worker.
            worker.release()
            self._done.set()


class _Worker:
    """A daemon thread that runs the calls handed to it, one at a time, and waits idle between."""

    _idle: list[_Worker] = []
    _lock = threading.Lock()

    def __init__(self) -> None:
        self._calls: queue.SimpleQueue[PluginCall] = queue.SimpleQueue()
        self._retired = False
        threading.Thread(target=self._serve, name=_IDLE_NAME, daemon=True).start()

    @classmethod
    def start(cls, call: PluginCall) -> None:
        with cls._lock:
            worker = cls._idle.pop() if cls._idle else None
        (worker or cls())._calls.put(call)

    @classmethod
    def forget_all(cls) -> None:
        """In a forked child: the parent's workers are not running there (nor holding the lock)."""
        cls._idle = []
        cls._lock = threading.Lock()

    def release(self) -> None:
        with self._lock:
            self._retired = len(self._idle) >= MAX_IDLE_WORKERS
            if not self._retired:
                self._idle.append(self)

    def _serve(self) -> None:
        while not self._retired:
            self._calls.get().run(self)


if hasattr(os, "register_at_fork"):  # POSIX only; elsewhere no process forks
    os.register_at_fork(after_in_child=_Worker.forget_all)


def run_isolated(
    plugin_id: str,
    call: Callable[[], object],
    token: CancelToken,
    stop_requested: Callable[[], bool] | None = None,
    over_budget: Callable[[], str] | None = None,
) -> dict[str, object]:
    """Run one plugin call on a worker thread until it returns or its token's deadline passes.

    The outcome has `result`, `error`, `cancelled`, `interrupted`, `stopped` (`stop_requested`,
    polled while waiting, said so: the user cancelled the run; the token is then set), or
    `pending` (still running at the deadline: the caller cancels the token, and a plugin that
    polls it stops). `over_budget`, polled too, names a budget the call has spent (memory): the
    token is then cancelled with that reason. A call left running is the outcome's `thread`.
    """
    if interrupt_requested():
        raise KeyboardInterrupt("interrupted by the user")
    outcome: dict[str, object] = {}

    def target() -> None:
        with bound(token), plugin_output():
            try:
                outcome["result"] = call()
            except Cancelled as exc:
                outcome["cancelled"] = exc.reason
            except KeyboardInterrupt:
                outcome["interrupted"] = True
            except SystemExit as exc:
                outcome["error"] = f"SystemExit (exit code {exc.code!r})"
            except BaseException as exc:  # noqa: BLE001 - a plugin that raises must not stop the run
                outcome["error"] = f"{type(exc).__name__}: {exc}"

    worker = PluginCall(f"plugin-{plugin_id}", target)
    _Worker.start(worker)
    try:
        while worker.is_alive() and not token.cancelled:
            if interrupt_requested():
                raise KeyboardInterrupt("interrupted by the user")
            remaining = token.remaining()
            worker.join(_STOP_POLL_S if remaining is None else min(remaining, _STOP_POLL_S))
            if stop_requested is not None and stop_requested() and worker.is_alive():
                token.cancel("cancelled by the user")
                outcome.update(stopped=True, thread=worker)
                return outcome
            if over_budget is not None and worker.is_alive() and (why := over_budget()):
                token.cancel(why)
    except BaseException:
        # Ctrl+C while waiting: the plugin is told to stop too, then the interrupt goes on.
        token.cancel("interrupted by the user")
        raise
    if worker.is_alive():
        outcome.update(pending=True, thread=worker)
    return outcome


def retrieve_bounded(plugin: KnowledgePlugin, ctx: RunContext, intent: Intent, timeout_ms: int) -> KbResult:
    """A kb plugin called outside a run (why-not, eval, `mrptui retrieve`), under the same
    `pluginTimeoutMs` and with the same outcomes as the kernel gives it: a hang, an exception or a
    malformed result is an `error` result naming it, never a frozen command."""
    token = CancelToken(time.monotonic() + timeout_ms / 1000, f"pluginTimeoutMs ({timeout_ms} ms)")
    outcome = run_isolated(plugin.id, lambda: plugin.retrieve(replace(ctx, cancel=token), intent), token)
    if "interrupted" in outcome:
        raise KeyboardInterrupt(f"interrupted inside plugin {plugin.id}")
    if "pending" in outcome or ("cancelled" in outcome and token.cancelled):
        token.cancel("timed out")
        return KbResult(status=Status.ERROR, reason=f"cancelled: timed out after {timeout_ms} ms (pluginTimeoutMs)")
    return checked(outcome, KbResult, "kb")


def checked(outcome: dict[str, object], error_type: type[R], stage: str) -> R:
    if "cancelled" in outcome:
        return error_type(status=Status.ERROR, reason=f"cancelled: {outcome['cancelled']}")
    if "error" in outcome:
        return error_type(status=Status.ERROR, reason=f"raised {outcome['error']}")
    result = outcome.get("result")
    if not isinstance(result, error_type):
        return error_type(status=Status.ERROR, reason=f"returned {type(result).__name__}, not {error_type.__name__}")
    if result.status not in _allowed_statuses(error_type):
        return error_type(status=Status.ERROR, reason=f"returned status {result.status!r}, not valid for {stage}")
    return result


def cut_for_trace(text: str, limit: int, budget: str) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters cut by trace.{budget}]"


def capped(result: Result, limits: TraceLimits) -> Result:
    """A plugin's reason within `trace.maxReasonChars`, so a 5 MB reason cannot flood traces and
    JSON. Its answer and intent CNL stay whole: validators read them (a cut marker read as a
    citation once turned grounded answers weak); only their trace copies are cut
    (`answer_for_trace`, and the engine's IntentDetected)."""
    reason = cut_for_trace(result.reason, limits.max_reason_chars, "maxReasonChars")
    return result if reason == result.reason else replace(result, reason=reason)


def answer_for_trace(answer: AnswerReady, limits: TraceLimits) -> AnswerReady:
    """The answer event with its texts within `trace.maxAnswerChars`; its status, decided on the
    whole answer, is kept."""
    limit = limits.max_answer_chars
    parts = tuple(
        part.model_copy(update={"answer": cut_for_trace(part.answer, limit, "maxAnswerChars")}) for part in answer.parts
    )
    return answer.model_copy(update={"answer": cut_for_trace(answer.answer, limit, "maxAnswerChars"), "parts": parts})


def _allowed_statuses(result_type: type) -> set[Status]:
    return {
        SdResult: {Status.SUCCESS, Status.UNSUPPORTED, Status.ERROR},
        KbResult: {Status.SUCCESS, Status.INSUFFICIENT, Status.ERROR},
        GsResult: {Status.SUCCESS, Status.NO_CONTEXT, Status.UNSUPPORTED, Status.ERROR},
        ValResult: {Status.ACCEPTED, Status.REJECTED, Status.UNSUPPORTED, Status.ERROR},
    }[result_type]
