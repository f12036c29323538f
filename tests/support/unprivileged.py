"""The CLI run as a user that file modes bind: the suite runs as root, which reads, lists and
writes whatever the modes say, so an unreadable KB file or a read-only cache is never one there.

Under root the child keeps uid 0 (the interpreter lives under /root, 0700, which nobody may
enter) but starts with an empty capability bounding set, so exec gives it no capabilities:
without CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_FOWNER, root is held to each file's mode
like any owner. A user other than root is held to them already. Where the drop does not take (no
CAP_SETPCAP in a container), `run_cli` skips the test, saying so.
"""

from __future__ import annotations

import ctypes
import functools
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.support.child_python import run_child

PR_CAPBSET_DROP = 24
LAST_CAP = 63  # every capability number the kernel may know; unknown ones are EINVAL, ignored

CLI = "import sys\nfrom mrptui.cli import main\nsys.exit(main(sys.argv[1:]))"


def _drop_capabilities() -> None:
    """In the child before exec: empty the bounding set (root's capabilities after exec)."""
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    for cap in range(LAST_CAP + 1):
        prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)


def _run(script: str, *args: str, timeout: float, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run_child(script, *args, timeout=timeout, preexec=_drop_capabilities if os.geteuid() == 0 else None, **env)


@functools.cache  # a probe process once per test process, not once per CLI run
def _modes_bind() -> bool:
    """Whether a child started as `_run` starts them cannot read a file of mode 000."""
    with tempfile.TemporaryDirectory() as folder:
        probe = Path(folder) / "probe"
        probe.write_text("x", encoding="utf-8")
        probe.chmod(0)
        done = _run("open(__import__('sys').argv[1]).read()", str(probe), timeout=60, env={})
        return done.returncode != 0


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`mrptui ARGS` in a child held to file modes, `env` added to the environment."""
    if not _modes_bind():
        pytest.skip("cannot start a child that file modes bind here (root without CAP_SETPCAP)")
    return _run(CLI, *args, timeout=timeout, env=env or {})
