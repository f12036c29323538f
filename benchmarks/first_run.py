"""What a new user meets first (issue 41): the first `mrptui ask` after an install, against the same
command once its code is compiled.

- `first_run`: the project freshly installed into an empty folder (`pip install --no-deps
  --target`, as a new virtual environment gets it: bytecode written by pip, no numba machine code,
  no unpacked NLP data), then one `mrptui ask` on an `n`-unit KB with an empty KB cache, timed as
  a whole process.
- `cold_open` (engine `mrptui-cli`): the same command from the same install right after, with the
  KB cache emptied again: what every later first question over a new KB costs.

The dependencies come from the running environment (installed and compiled once, like any
package a user already has). A `--smoke` run copies the sources instead of installing them (pip
builds a wheel for ~10–30 s), which still starts from nothing compiled, and asks once for both rows.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import row, smoke
from benchmarks.memory import write_kb
from benchmarks.synthetic import SyntheticKb

OPS = ("first_run",)
ROOT = Path(__file__).resolve().parent.parent


def run(sizes: list[int]) -> list[dict]:
    rows = []
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="mrptui-first-run-") as tmp:
            work = Path(tmp)
            (work / "kb").mkdir()
            write_kb(n, work / "kb")
            install = _install(work / "install")
            question = f"what is {SyntheticKb(n, query_count=1).queries[0]}?"
            first = _ask_ms(install, work, question)
            # The second ask is the same command from the same install: a smoke run, which times
            # nothing, has proved it runs to its end with the first.
            again = first if smoke() else _ask_ms(install, work, question)
            rows.append(row("mrptui", n, "first_run", [first], 0.0))
            rows.append(row("mrptui-cli", n, "cold_open", [again], 0.0))
    return rows


def _install(target: Path) -> Path:
    if smoke():
        # Nothing compiled or unpacked comes along: the checkout's unpacked NLP data
        # (core/nlp/unpacked.py) is no more part of a fresh install than its bytecode.
        skip = shutil.ignore_patterns("__pycache__", "unpacked")
        for package in ("core", "mrptui"):
            shutil.copytree(ROOT / package, target / package, ignore=skip)
        # The wheel ships config/ and sample_kb/ inside core (pyproject's package-dir).
        shutil.copytree(ROOT / "config", target / "core" / "bundled_config")
        shutil.copytree(ROOT / "sample_kb", target / "core" / "bundled_kb")
        return target
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(ROOT)],
        check=True,
        capture_output=True,
    )
    return target


def _ask_ms(install: Path, work: Path, question: str) -> float:
    """One `mrptui ask` over the KB with an empty KB cache: the whole process's wall time."""
    cache = work / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    env = {
        **os.environ,
        "MRPTUI_CACHE_DIR": str(cache),
        "PYTHONPATH": str(install),
        "XDG_CACHE_HOME": str(work / "xdg-cache"),
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("NUMBA_CACHE_DIR", None)
    # Run from the work folder, so the checkout's own `core` (the working directory on sys.path)
    # is not the one imported; the installed copy comes first on PYTHONPATH.
    command = [sys.executable, "-m", "mrptui.cli", "--kb", str(work / "kb"), "ask", question]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True)
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise RuntimeError(f"first_run: mrptui ask exited {done.returncode}: {done.stderr[-500:]}")
    _check_imported_from(install, env, work)
    return elapsed


def _check_imported_from(install: Path, env: dict, work: Path) -> None:
    where = subprocess.run(
        [sys.executable, "-c", "import core; print(core.__file__)"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not Path(where).is_relative_to(install):
        raise RuntimeError(f"first_run: core was imported from {where}, not the fresh install {install}")
