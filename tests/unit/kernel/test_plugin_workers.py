"""Plugin calls run on worker threads kept between calls (core/kernel/calls.py): a call still has a
thread to itself while it runs, named for its plugin; a call the kernel abandons keeps its worker,
and the next call gets another; idle workers are bounded."""

from __future__ import annotations

import threading
import time

from core.infra.cancel import CancelToken
from core.kernel.calls import MAX_IDLE_WORKERS, run_isolated

IDLE = "mrptui-idle-plugin-worker"


def _token(seconds: float = 5.0) -> CancelToken:
    return CancelToken(time.monotonic() + seconds, "pluginTimeoutMs (test)")


def _where() -> tuple[int, str]:
    thread = threading.current_thread()
    return thread.ident or 0, thread.name


def test_a_call_runs_off_the_calling_thread_named_for_its_plugin_and_the_next_reuses_it() -> None:
    first = run_isolated("kb-a", _where, _token())["result"]
    second = run_isolated("kb-b", _where, _token())["result"]
    assert first[0] != threading.get_ident()
    assert (first[1], second[1]) == ("plugin-kb-a", "plugin-kb-b")
    assert second[0] == first[0]  # the worker came back for the next call
    assert _name_of(first[0]) == IDLE  # between calls it carries no plugin's name


def test_an_abandoned_call_keeps_its_worker_and_the_next_call_gets_another() -> None:
    release, stuck_on = threading.Event(), []

    def stuck() -> None:
        stuck_on.append(threading.get_ident())
        release.wait(10)

    outcome = run_isolated("kb-left-running", stuck, _token(0.05))
    assert outcome.get("pending") is True
    left = outcome["thread"]
    assert left.is_alive()
    after = run_isolated("kb-next", _where, _token())["result"]
    assert after[1] == "plugin-kb-next"
    assert after[0] != stuck_on[0]
    assert _name_of(stuck_on[0]) == "plugin-kb-left-running"
    release.set()
    left.join(5)
    assert not left.is_alive()
    assert _name_of(stuck_on[0]) == IDLE


def test_idle_workers_are_bounded_after_calls_ran_side_by_side() -> None:
    count = MAX_IDLE_WORKERS + 4
    started, release = threading.Barrier(count + 1), threading.Event()

    def call() -> None:
        run_isolated("kb-wide", lambda: (started.wait(10), release.wait(10)), _token())

    callers = [threading.Thread(target=call) for _ in range(count)]
    for caller in callers:
        caller.start()
    started.wait(10)  # every call is running, each on a worker of its own
    assert sum(t.name == "plugin-kb-wide" for t in threading.enumerate()) == count
    release.set()
    for caller in callers:
        caller.join(10)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _idle_workers() > MAX_IDLE_WORKERS:
        time.sleep(0.01)
    assert _idle_workers() <= MAX_IDLE_WORKERS


def _idle_workers() -> int:
    return sum(t.name == IDLE for t in threading.enumerate())


def _name_of(ident: int) -> str:
    return next(t.name for t in threading.enumerate() if t.ident == ident)
