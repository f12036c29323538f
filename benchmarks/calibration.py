"""What this machine does in a fixed amount of work, measured at the start of every benchmark run,
so that a reader can tell the code from the machine (issue 41): absolute times only hold for the
machine they were taken on; ratios to a peer or to these rows, taken in the same run, transfer.

- `cpu_loop`: ten million additions in a Python function (one core, the interpreter's speed);
  a quiet machine of the project's kind runs it in 0.40–0.66 s.
- `memory_read`: the single-thread read bandwidth, as the time to sum a 256 MB array once
  (also the HDC scan's floor in benchmarks/retrieval.py).
- `bare_import`: a fresh `python -c "import numpy, pydantic"`, the floor under any CLI command.
- `py_stem`: 10,000 distinct made-up words stemmed by nltk's Porter stemmer (ORIGINAL_ALGORITHM, as
  the tokenizer uses it): strings, dicts and small objects, the work of a build and of answering.
  `cpu_loop` does not show that speed: on 2026-11-29 the same trees cost 2.5–3× the CPU of
  2026-11-26's machine (nltk's Porter 15–17 µs a word against ~8) while `cpu_loop` read inside
  its calibrated range (docs/benchmarks.md).

Each is the best of a few tries: the machine's capacity, not its current load, which every row
reports beside it (`load`, the one-minute load average before and after its module ran).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np

from benchmarks import repeats, row, smoke
from core.infra.submodule import import_submodule

_LOOP_ADDITIONS = 10_000_000
_BANDWIDTH_BYTES = 256 * 2**20
_STEM_WORDS = 10_000
_SYLLABLES = ("con", "ser", "vat", "ion", "ing", "ed", "al", "ize", "ness", "ful", "re", "ab", "ly", "ment", "er")


def _sized(full: int) -> int:
    """The work a row measures: `full`, or a tenth in a smoke run, whose rows only show that the
    calibration runs to the end (the test suite's benchmark smoke runs the calibration three times)."""
    return full // 10 if smoke() else full


def _add_loop(count: int) -> int:
    total = 0
    for i in range(count):
        total += i
    return total


def _best_ms(call, tries: int) -> float:
    best = float("inf")
    for _ in range(tries):
        started = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - started)
    return best * 1000


def _made_up_words(count: int) -> list[str]:
    """`count` distinct words of four syllables (the digits of 0, 1, … in base 15), the same list
    on every run."""
    base = len(_SYLLABLES)
    return ["".join(_SYLLABLES[n // base**i % base] for i in range(4)) for n in range(count)]


def stem_ms() -> float:
    """The best of three passes of nltk's Porter stemmer over the made-up words (a new stemmer
    each pass: nltk keeps no cache, but the pass must not depend on a previous one). The module
    is loaded as the tokenizer loads it: `from nltk.stem import porter` runs nltk's __init__,
    which imports nearly all of nltk and scipy.stats (~1.2 CPU s a run, none of it measured)."""
    porter = import_submodule("nltk.stem.porter")

    words = _made_up_words(_sized(_STEM_WORDS))

    def stem_all() -> None:
        stemmer = porter.PorterStemmer(mode=porter.PorterStemmer.ORIGINAL_ALGORITHM)
        for word in words:
            stemmer.stem(word)

    return _best_ms(stem_all, repeats(3))


def read_bandwidth() -> float:
    """Single-thread memory read bandwidth in bytes/s: the best of five sums over a 256 MB array."""
    size = _sized(_BANDWIDTH_BYTES)
    data = np.ones(size // 8, dtype=np.uint64)
    return size / (_best_ms(data.sum, repeats(5, 2)) / 1000)


def bare_import_ms() -> float:
    command = [sys.executable, "-c", "import numpy, pydantic"]
    env = {**os.environ}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return _best_ms(lambda: subprocess.run(command, env=env, check=True), repeats(5))


def rows() -> list[dict]:
    """The calibration rows (engine `calibration`, n 0)."""
    loop_ms = _best_ms(lambda: _add_loop(_sized(_LOOP_ADDITIONS)), repeats(3))
    read_ms = _BANDWIDTH_BYTES / read_bandwidth() * 1000
    return [
        row("calibration", 0, "cpu_loop", [loop_ms], 0.0),
        row("calibration", 0, "memory_read", [read_ms], 0.0),
        row("calibration", 0, "bare_import", [bare_import_ms()], 0.0),
        row("calibration", 0, "py_stem", [stem_ms()], 0.0),
    ]
