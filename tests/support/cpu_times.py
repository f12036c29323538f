"""Opt-in pytest plugin: each test's CPU seconds (the process's own plus its reaped child
processes', user + system), wall seconds, the one-minute load and the xdist worker, appended to a TSV as each test
ends, so a run stopped early keeps what it measured (docs/testing.md):

    pytest -p tests.support.cpu_times -p no:randomly -n 0 tests/tui    # CPU_TIMES_OUT=cpu.tsv

CPU moves far less with the shared machine's load than wall time does. Module fixtures are charged
to the test that builds or tears them down."""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Iterator

import pytest


def _cpu_s() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    cpu, wall = _cpu_s(), time.perf_counter()
    yield
    worker = os.environ.get("PYTEST_XDIST_WORKER", "-")
    with open(os.environ.get("CPU_TIMES_OUT", "cpu_times.tsv"), "a", encoding="utf-8") as out:
        out.write(
            f"{item.nodeid}\t{_cpu_s() - cpu:.3f}\t{time.perf_counter() - wall:.3f}\t{os.getloadavg()[0]:.1f}\t{worker}\n"
        )
