"""What conversation memory adds to a question (issue 26 target: ≤ 2 ms at 1,000 records).

memory_recall   a conversation of `n` records (session turns, user notes, summaries) is scored for a
                follow-up question: the view and content-digest re-check of the 100 units they
                cite, HDC similarity, seed 001's hybrid score and
                the best five offered to the request (`core.memory.turns.with_memory`), 200 times
                (once in a smoke run).

    python -m benchmarks.memory_recall [RECORDS]
"""

from __future__ import annotations

import sys

from benchmarks import measure, repeats, row
from core.infra.config import HdcConfig, MemoryConfig
from core.kb.knowledge_base import KBView, KnowledgeBase
from core.kernel.contract import Request
from core.memory.cited import content_digest
from core.memory.conversation import Conversation
from core.memory.turns import with_memory
from core.units import Caller, KnowledgeUnit, Role

OPS = ("memory_recall",)
RECORDS = 1_000
QUERIES = 200


def conversation(n: int) -> tuple[Conversation, KBView]:
    clock = iter(range(10_000_000)).__next__
    config = MemoryConfig(max_records=max(n, 1), compact_after_turns=10_000)
    talk = Conversation(Caller(), None, config, HdcConfig(), None, lambda: float(clock()))
    units = [
        KnowledgeUnit(
            id=f"fleet::chunk-{i:03d}::unit-000",
            source_id="fleet",
            chunk_id=f"fleet::chunk-{i:03d}",
            role=Role.DESCRIPTION,
            topic=f"vessel {i}",
            claim=f"Vessel {i} is moored at berth {i % 17}.",
        )
        for i in range(100)
    ]
    view = KnowledgeBase.from_units(units).view(Caller())
    for i in range(n):
        # Each record cites a unit with the digest of its content: recall re-checks both.
        unit = units[i % 100]
        cited = {unit.id: content_digest(unit)}
        if i % 10 == 0:
            talk.note(f"note {i}: vessel {i} is moored at berth {i % 17}", cited)
        else:
            talk.remember(f"Who maintains vessel {i}?", f"the yard at berth {i % 17}", f"vessel {i}", cited)
    return talk, view


def run(sizes: list[int], ops: set[str] | None = None, records: int = RECORDS) -> list[dict]:
    """One row whatever the KB sizes: the cost depends on the records, not the KB."""
    if ops is not None and "memory_recall" not in ops:
        return []
    talk, view = conversation(records)
    request = Request(question="And who maintains it now?")
    with_memory(request, talk, view)  # first call builds the record vectors once
    times, peak = measure([lambda: with_memory(request, talk, view)] * repeats(QUERIES))
    return [row("mrptui-memory", records, "memory_recall", times, peak)]


if __name__ == "__main__":
    for result in run([], records=int(sys.argv[1]) if len(sys.argv) > 1 else RECORDS):
        print(result)
