"""The cold-build pool (core/store/pool.py) dies with mrptui: after a kill -9 or SIGTERM of the
CLI mid-build no forkserver, worker or resource tracker stays behind holding the caller's
stdout (a `$(mrptui …)` would never return), and Ctrl+C stops the workers instead of waiting
for the files they are building. A real CLI process cold-builds a generated KB."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks.memory import write_kb
from tests.support.interrupts import sigint_default

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


@pytest.fixture(scope="module")
def big_kb(tmp_path_factory) -> Path:
    # Four files of ~2 MB: each takes a worker several seconds, so a kill lands mid-build.
    folder = tmp_path_factory.mktemp("big") / "kb"
    folder.mkdir()
    write_kb(20_000, folder)
    return folder


def group_members(group: int) -> list[int]:
    """Live (not zombie) processes of process group `group`: the CLI's descendants keep its group."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == group and fields[0] != "Z":
            members.append(int(entry.name))
    return members


# The explorer's way: pool helpers started by the main thread, the KB loaded by a worker thread.
EXPLORER_LIKE = """
import sys, threading
from pathlib import Path
from mrptui.commands.explore import start_pool_helpers
start_pool_helpers()
from core.kb.knowledge_base import KnowledgeBase
loader = threading.Thread(target=KnowledgeBase.load, args=([Path(sys.argv[1])],))
loader.start()
loader.join()
"""


def start_cold_build(kb: Path, cache: Path, explorer: bool = False) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MRPTUI_CACHE_DIR": str(cache), "MRPTUI_BUILD_WORKERS": "2"}
    env.pop("MRPTUI_NO_CACHE", None)
    command = ["-c", EXPLORER_LIKE, str(kb)] if explorer else ["-m", "mrptui.cli", "--kb", str(kb), "check"]
    process = subprocess.Popen(
        [sys.executable, *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=env,
        cwd=ROOT,
        start_new_session=True,
        preexec_fn=sigint_default,
    )
    deadline = time.monotonic() + 60
    # Mid-build: the CLI, its resource tracker, the forkserver and two workers.
    while len(group_members(process.pid)) < 5:
        assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
        assert time.monotonic() < deadline, "the pool never started"
        time.sleep(0.05)
    time.sleep(0.5)
    assert process.poll() is None, "the build ended before the signal"
    return process


def wait_gone(process: subprocess.Popen[bytes], seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    left = group_members(process.pid)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = group_members(process.pid)
    return left


def eof_within(process: subprocess.Popen[bytes], seconds: float) -> bool:
    """Whether a reader of the CLI's stdout sees EOF: no process holds the pipe any more."""
    import selectors

    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + seconds
        while (remaining := deadline - time.monotonic()) > 0:
            if selector.select(remaining) and not os.read(process.stdout.fileno(), 65536):
                return True
    return False


@pytest.mark.parametrize(
    ("signum", "explorer"),
    [(signal.SIGKILL, False), (signal.SIGTERM, False), (signal.SIGKILL, True)],
    ids=["kill-9", "sigterm", "kill-9 explorer-like"],
)
def test_killing_the_cli_mid_build_leaves_no_process_and_closes_its_stdout(big_kb, tmp_path, signum, explorer):
    process = start_cold_build(big_kb, tmp_path / "cache", explorer)
    try:
        os.kill(process.pid, signum)
        assert eof_within(process, 2.0), "a child still holds the caller's stdout"
        assert wait_gone(process, 2.0) == []
    finally:
        for pid in group_members(process.pid):
            os.kill(pid, signal.SIGKILL)
        process.wait(10)


def test_ctrl_c_mid_build_stops_the_workers_instead_of_waiting_for_them(big_kb, tmp_path):
    process = start_cold_build(big_kb, tmp_path / "cache")
    try:
        # A terminal's Ctrl+C reaches the whole foreground process group.
        os.killpg(process.pid, signal.SIGINT)
        assert process.wait(5) == 130
        assert wait_gone(process, 2.0) == []
        assert b"Traceback" not in process.stderr.read()
    finally:
        for pid in group_members(process.pid):
            os.kill(pid, signal.SIGKILL)
        process.wait(10)
