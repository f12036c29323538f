"""How the explorer was started (the CLI's flags and the tests' knobs), fixed for its lifetime and
handed to the components that read them."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ExplorerOptions:
    """How the explorer was started: what it shows, its clock, and how it batches and polls."""

    kb_label: str = ""
    replay: bool = False  # showing a saved trace: nothing runs
    replay_note: str = ""  # where a replayed trace stops early and why (a cut or bad line)
    clock: Callable[[], float] = time.monotonic
    show_durations: bool = True
    poll_interval: float = 1.0  # seconds between checks of the KB files (0: never)
    batch_size: int = 16  # engine events per message from the worker
    batch_seconds: float = 0.05  # or fewer, when this long passed since the last message
    queries_path: Path | None = None  # F4's queries file; None: there is none (F4 says so)
