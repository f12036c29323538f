"""A hard time limit for tests of inputs that used to hang (catastrophic regex backtracking)."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

# Long enough that a loaded machine never trips it on linear work (milliseconds on 100k
# characters), short enough to catch what these tests guard against: backtracking that is
# quadratic or worse on such inputs runs for minutes. It catches hangs; speed goals live in
# benchmarks/.
HANG_SECONDS = 20


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
