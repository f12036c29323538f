"""SIGTERM during a cold build's worker pool (issue 36): the real CLI exits 143 through its `with`
blocks, the pool's semaphores are released (no resource_tracker "leaked semaphore" warning), and
no half-written temp folder stays in the cache. Heavy (a 5 MB KB, a real pool): `make fuzz` runs it."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def write_big_kb(folder: Path, files: int = 3, units: int = 6_000) -> None:
    rng = random.Random(7)
    words = [f"w{i}x" for i in range(20_000)]
    folder.mkdir()
    for number in range(files):
        blocks = [
            f"## Context Unit big{number}::chunk-{u // 10:03d}::unit-{u % 10:03d}\nRole: Explanation\n"
            f"Topic: {' '.join(rng.choices(words, k=4))}\nClaim: {' '.join(rng.choices(words, k=40))}.\n"
            for u in range(units)
        ]
        (folder / f"part-{number}.md").write_text("\n".join(blocks), encoding="utf-8")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process start times come from /proc")
def test_sigterm_mid_build_exits_cleanly_without_leaked_semaphores_or_temp_folders(tmp_path: Path) -> None:
    kb, cache = tmp_path / "kb", tmp_path / "cache"
    write_big_kb(kb)
    env = {**os.environ, "MRPTUI_CACHE_DIR": str(cache), "MRPTUI_BUILD_WORKERS": "2"}
    child = subprocess.Popen(
        [sys.executable, "-m", "mrptui.cli", "--kb", str(kb), "ask", "what is w1x"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 300
    temps = cache / "tmp"
    while time.monotonic() < deadline and child.poll() is None:
        if temps.is_dir() and any(p.name.startswith(".tmp-") for p in temps.iterdir()):
            break
        time.sleep(0.05)
    assert child.poll() is None, "the build ended before a worker wrote anything"
    child.send_signal(signal.SIGTERM)
    err = child.communicate(timeout=120)[1]
    assert child.returncode == 128 + signal.SIGTERM
    assert "leaked semaphore" not in err and "Traceback" not in err
    assert [p for p in cache.rglob(".tmp-*")] == []
