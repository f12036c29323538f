"""A hard time limit for tests of inputs that used to hang (catastrophic regex backtracking)."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Fail instead of hanging: SIGALRM interrupts Python code and the regex engine alike."""

    def expire(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
