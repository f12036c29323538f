"""Hypothesis settings for the fault and fuzz suites: bounded under `make test`, longer under
`make fuzz` (HYPOTHESIS_PROFILE=fuzz, registered in tests/conftest.py).

`make test` runs derandomised (a fixed seed, no example database), so CI sees the same examples
every time; the fuzz profile multiplies every count by tests/conftest.py's `FUZZ_SCALE` and draws fresh
examples.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "default")
# tests/conftest.py sets HARDENING_EXAMPLES to its FUZZ_SCALE under the fuzz profile; set by
# hand, it scales a local hunt.
SCALE = int(os.environ.get("HARDENING_EXAMPLES", "1"))


def bounded(examples: int, hunt: int | None = None) -> settings:
    """`examples` under `make test`, `(hunt or examples) * FUZZ_SCALE` fresh ones under `make fuzz`:
    a property too slow for every run keeps its long hunt."""
    return settings(
        max_examples=examples if SCALE == 1 else (hunt or examples) * SCALE,
        deadline=None,
        derandomize=PROFILE != "fuzz",
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
    )


def derandomised(examples: int, hunt: int | None = None) -> settings:
    """`bounded`, on the fixed seed under `make fuzz` too: the hardening suites hunt further
    along the same examples rather than through fresh ones."""
    return settings(bounded(examples, hunt), derandomize=True)
