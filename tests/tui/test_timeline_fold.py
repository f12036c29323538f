"""The timeline folds the candidates a stage did not reach for one reason into a single row; space
lists them and folds them again. Built from a hand-written trace in which two stages end early."""

from __future__ import annotations

from conftest import make_app
from helpers import settle

from core.kernel.events import (
    AttemptFinished,
    AttemptStarted,
    PlanBuilt,
    PlanStage,
    RunFinished,
    RunStarted,
    StageStarted,
)
from mrptui.session_seam import NullSession
from mrptui.state import TimelineRow, reduce
from mrptui.widgets.keybar import KeyBar
from mrptui.widgets.timeline import AttemptsTimeline, Fold, fold_rows

KB = ("kb-balanced", "kb-fast", "kb-thinkingdb")
VAL = ("val-grounded", "val-llm")


def _offered(app) -> list[tuple[str, str]]:
    """(key, label) pairs the key bar shows."""
    return [(key, label) for _, key, label in app.screen.query_one(KeyBar)._items]


def _trace() -> list:
    events = [
        RunStarted(question="Which hive frames hold brood?", as_of="2026-01-15", kb_version="v1"),
        PlanBuilt(
            revision=0,
            planner="planner-default",
            stages=(
                PlanStage(stage="kb", candidates=KB, reasons=("kb-balanced pinned by the user",)),
                PlanStage(stage="val", candidates=VAL),
            ),
        ),
        StageStarted(stage="kb", revision=0),
        AttemptStarted(stage="kb", plugin="kb-balanced", revision=0),
        AttemptFinished(stage="kb", plugin="kb-balanced", status="success", reason="5 kept", revision=0),
        *(
            AttemptFinished(
                stage="kb", plugin=p, status="skipped", reason="not reached: kb-balanced was sufficient", revision=0
            )
            for p in KB[1:]
        ),
        StageStarted(stage="val", revision=0),
        AttemptStarted(stage="val", plugin="val-grounded", revision=0),
        AttemptFinished(stage="val", plugin="val-grounded", status="accepted", reason="cites 2", revision=0),
        AttemptFinished(
            stage="val", plugin="val-llm", status="skipped", reason="not reached: val-grounded accepted", revision=0
        ),
        RunFinished(status="grounded"),
    ]
    return [event.model_copy(update={"seq": n}) for n, event in enumerate(events)]


def test_runs_of_two_or_more_not_reached_rows_fold_and_a_single_one_stays_a_row() -> None:
    rows = reduce(_trace()).rows
    entries = fold_rows(rows)
    folds = [e for e in entries if isinstance(e, Fold)]
    assert len(folds) == 1 and folds[0].plugins == ["kb-fast", "kb-thinkingdb"]
    assert folds[0].text == "kb-balanced was sufficient: kb-fast, kb-thinkingdb"
    assert any(isinstance(e, TimelineRow) and e.plugin == "val-llm" for e in entries)
    assert len(entries) == len(rows) - 1
    assert fold_rows(rows, {folds[0].key}) == list(rows)


async def test_space_lists_the_folded_candidates_and_folds_them_again() -> None:
    app = make_app(NullSession(), replay=_trace())
    async with app.run_test(size=(150, 42)) as pilot:
        await settle(pilot)
        await pilot.press("escape", "2")
        timeline = app.screen.query_one(AttemptsTimeline)
        fold_at = next(i for i, e in enumerate(timeline.entries) if isinstance(e, Fold))
        timeline.move_cursor(row=fold_at)
        await pilot.pause()
        assert "2 not reached" in str(timeline.get_row_at(fold_at)[1]) and timeline.selected is None
        assert ("space", "Unfold") in _offered(app)
        await pilot.press("c")
        assert app.clipboard == "↷ 2 not reached (kb, r0): kb-balanced was sufficient: kb-fast, kb-thinkingdb"
        await pilot.press("space")
        shown = [e.plugin for e in timeline.entries if isinstance(e, TimelineRow) and e.stage == "kb"]
        assert shown == list(KB) and timeline.selected.plugin == "kb-fast"
        assert timeline.row_count == len(app.state.rows)
        await pilot.press("down", "space")  # from any of the listed rows
        assert isinstance(timeline.selected_entry, Fold) and timeline.cursor_row == fold_at
        await pilot.press("space")  # listed again; on a listed row the key bar offers Fold
        assert ("space", "Fold") in _offered(app) and ("space", "Unfold") not in _offered(app)
        await pilot.press("up")  # kb-balanced's own row: nothing to fold, so space is not offered
        assert not any(key == "space" for key, _ in _offered(app))
        await pilot.press("space")
        assert timeline.row_count == len(app.state.rows)  # still listed: space did nothing here


def test_snapshot_timeline_with_a_folded_row(snap_compare) -> None:
    async def run_before(pilot) -> None:
        await settle(pilot)
        await pilot.press("escape", "2", "z", "up", "up")  # zoomed, on the folded row: its whole text
        pilot.app.clear_notifications()
        await pilot.pause()

    app = make_app(NullSession(), replay=_trace(), kb_label="replay hives.jsonl")
    assert snap_compare(app, terminal_size=(150, 42), run_before=run_before)


async def test_the_cursor_moving_among_plain_rows_does_not_ask_for_the_bindings_again() -> None:
    """Only a row where space does something else publishes the bindings (issue 41: every refill of a
    live run highlights a row, and each publish made the panel screen work its bindings out again)."""
    app = make_app(NullSession(), replay=_trace())
    async with app.run_test(size=(150, 42)) as pilot:
        await settle(pilot)
        await pilot.press("escape", "2")
        timeline = app.screen.query_one(AttemptsTimeline)
        plain = [i for i, e in enumerate(timeline.entries) if not isinstance(e, Fold)]
        fold_at = next(i for i, e in enumerate(timeline.entries) if isinstance(e, Fold))
        published: list[object] = []
        app.screen.bindings_updated_signal.subscribe(timeline, published.append)
        timeline.move_cursor(row=plain[0])
        await pilot.pause()
        published.clear()
        for row in plain[1:]:
            timeline.move_cursor(row=row)
            await pilot.pause()
        assert published == []
        timeline.move_cursor(row=fold_at)  # space unfolds here: the key bar must hear of it
        await pilot.pause()
        assert published and ("space", "Unfold") in _offered(app)
