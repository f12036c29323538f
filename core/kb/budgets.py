"""Whole-KB budgets: how many files, bytes and units one KB may have before it is opened at all.

Files and bytes are counted from the scan, before any file is read; units as each file's segment
comes in (from a build worker, the cache or a build here), so a KB past `inputs.maxKbUnits` stops
at the file that passed it rather than after building the rest. The budgets are `inputs` in
retrieval.json (`KbBudgets`), where an author with a larger KB raises them. Past any of them the load raises
`OverBudget`, naming the budget: the KB is refused, never served in part, since a KB cut at some
file would change which units a caller sees without saying so (docs/store.md, "Whole-KB budgets").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from core.infra.config import KbBudgets, OverBudget
from core.infra.diagnostics import Code, Diagnostic
from core.kb.walk import printable


def refusal(budget: str, value: int, what: str, file: str) -> OverBudget:
    """The open refused at `file`, where the count passed `budget` (`inputs.maxKbUnits` = `value`)."""
    message = (
        f"the KB holds more than {value:,} {what} (inputs.{budget} in retrieval.json), counted up to "
        "this file; it is not opened: open a part of it (fewer folders or files) or raise the budget"
    )
    return OverBudget([Diagnostic(code=Code.KB_TOO_LARGE, message=message, file=printable(file))])


def check_scan(files: Sequence[Path], stats: Mapping[str, tuple[int, int, int, int]], caps: KbBudgets) -> None:
    """Refuse a KB of more than `caps.max_kb_files` files or `caps.max_kb_bytes` bytes (by the
    scan's stats: mtime, size, ...), at the file that passed the budget."""
    if len(files) > caps.max_kb_files:
        raise refusal("maxKbFiles", caps.max_kb_files, "files", str(files[caps.max_kb_files]))
    # The scan stated each file once: summed from there, files are only walked to name the one.
    if sum(max(stat[1], 0) for stat in stats.values()) <= caps.max_kb_bytes:
        return
    total = 0
    for file in files:
        total += max(stats.get(str(file), (0, 0))[1], 0)
        if total > caps.max_kb_bytes:
            raise refusal("maxKbBytes", caps.max_kb_bytes, "bytes", str(file))


class UnitCount:
    """Units of the segments read so far, each source counted once (a worker's early segment is
    read again from `early` later)."""

    def __init__(self, caps: KbBudgets):
        self.limit = caps.max_kb_units
        self._counted: dict[str, int] = {}
        self.total = 0

    def add(self, source: str, units: int, file: Path) -> None:
        """`source`'s `units` (`file`: its last file, where a refusal points)."""
        if source in self._counted:
            return
        self._counted[source] = units
        self.total += units
        if self.total > self.limit:
            raise refusal("maxKbUnits", self.limit, "units", str(file))
