"""The evidence pane's rows are built in the engine worker as a run's retrievals arrive: the UI
thread's refill finds them (issue 41), and a re-sort builds its order once."""

from __future__ import annotations

import threading

from helpers import ask

from mrptui.widgets import evidence_rows
from mrptui.widgets.evidence import EvidenceTable
from mrptui.widgets.evidence_rows import DEFAULT_SORT, build_rows, rows_of


def spy_builds(monkeypatch) -> list[tuple[str, bool, str]]:
    """(column, reverse, thread name) of every order built."""
    built: list[tuple[str, bool, str]] = []

    def counting(scored, column, reverse):
        if scored is not None:  # an empty pane (no retrieval yet) has no rows to build ahead
            built.append((column, reverse, threading.current_thread().name))
        return build_rows(scored, column, reverse)

    monkeypatch.setattr(evidence_rows, "build_rows", counting)
    return built


async def test_a_runs_rows_are_built_off_the_ui_thread_and_a_sort_once(app, monkeypatch) -> None:
    built = spy_builds(monkeypatch)
    async with app.run_test(size=(150, 42)) as pilot:
        await ask(pilot)
        table = app.screen.query_one(EvidenceTable)
        assert table.row_count and table._rows is rows_of(table.current, *DEFAULT_SORT)
        first = [(column, reverse) for column, reverse, thread in built if thread == threading.main_thread().name]
        assert first == [] and any(column == "rank" for column, _, _ in built)  # the worker built them
        built.clear()
        await pilot.press("3", "o", "O", "O")  # by id, reversed, and back: two orders built once each
        assert [(column, reverse) for column, reverse, _ in built] == [("id", False), ("id", True)]
        assert [c.id for c in table._shown] == sorted(c.id for c in table._shown)
        # Another retrieval (equal but for its candidates) gets rows of its own.
        scored = table.current
        twin = scored.model_copy(update={"candidates": scored.candidates[:1]})
        assert len(rows_of(twin, *DEFAULT_SORT).texts) == 1 < len(rows_of(scored, *DEFAULT_SORT).texts)
