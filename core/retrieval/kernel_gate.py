"""Compiled kernels (numba, the optional `fast` extra) loaded without ever making a caller wait.

Importing numba and loading a kernel from its disk cache take ~1–3 s (the first compile on a
machine ~20 s), more than thousands of calls of the numpy path it replaces. So a gate asks for
its kernel only on a call at least `threshold` big, and that first call starts loading it in a
background thread and is served by the numpy path, as is every call until the kernel is ready;
from then on the kernel serves every call. Both paths give the same results (each kernel's tests
say how), so which one ran never shows. Small KBs and one-off CLI questions never import numba.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from functools import cache
from importlib.util import find_spec

from core.infra.collector import collector_paused, keep_out_of_collections


@cache
def numba_installed() -> bool:
    return find_spec("numba") is not None


class KernelGate:
    """`module.attribute`, a compiled function, once loaded in the background."""

    def __init__(self, module: str, attribute: str, threshold: int, name: str) -> None:
        self._module, self._attribute, self.threshold, self._name = module, attribute, threshold, name
        self._ready: list[Callable] = []
        self._lock = threading.Lock()
        self._started: list[threading.Thread] = []

    @property
    def ready(self) -> Callable | None:
        """The kernel once loaded, else None."""
        return self._ready[0] if self._ready else None

    def kernel_for(self, size: int) -> Callable | None:
        """The kernel for a call of `size` (rows, postings, …), or None: the numpy path."""
        if self._ready:
            return self._ready[0]
        if size < self.threshold or not numba_installed():
            return None
        with self._lock:
            if not self._started:
                thread = threading.Thread(target=self._load, name=self._name, daemon=True)
                self._started.append(thread)
                thread.start()
        return None

    @property
    def started(self) -> bool:
        """Whether some call has started loading the kernel."""
        return bool(self._started)

    def wait_until_loaded(self, timeout: float) -> bool:
        """Whether the kernel is ready, waiting up to `timeout` s for a load in progress (benchmarks
        and tests, which time or check the compiled path itself)."""
        if self._started:
            self._started[0].join(timeout)
        return bool(self._ready)

    def _load(self) -> None:
        # Importing numba makes ~100k objects that live as long as the process: left in the
        # collector's generations, each full collection walked them all (4 in 50 questions at
        # 100k units, ~18 ms of each question's wall on average at load 9).
        with collector_paused():
            kernel = getattr(importlib.import_module(self._module), self._attribute)
        keep_out_of_collections()
        self._ready.append(kernel)
