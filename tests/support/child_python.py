"""A short Python script run in a fresh interpreter on this tree's code: for the tests that drop
to another user (root to nobody), limit a resource, or read what a new process reads."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_child(
    script: str, *args: str, timeout: float = 120, preexec: Callable[[], None] | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    """`python -c script args` from the repository's root, this tree first on PYTHONPATH, `env`
    added to the environment, `preexec` run in the child before it starts Python; its output
    captured as text."""
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=preexec,
    )
