"""Ctrl+C for a CLI child process, whatever shell started the test run.

A non-interactive shell starts a background job (`make test &`, `nohup`) with SIGINT ignored, and
every process it starts inherits that; Python then leaves SIGINT ignored (it installs its handler
only over the default disposition), and so does mrptui on purpose. A test that sends SIGINT must
therefore give its child the default disposition first, as a terminal's foreground job has.
"""

from __future__ import annotations

import signal


def sigint_default() -> None:
    """`preexec_fn` for a child that a test will interrupt: SIGINT back to its default."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
