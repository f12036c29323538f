"""The run diff screen: rows level on both sides, changes-only, next/previous change, copy, palette."""

from __future__ import annotations

import pytest
from conftest import make_app
from helpers import record_notifications, until
from shared_app import shared_app_of

from mrptui.screens.diff import DiffRowView, DiffScreen
from mrptui.screens.help import help_for
from mrptui.state import RunRecord
from tests.support.tide_runs import GAUGE, candidates, run  # noqa: E402

LONG = (
    "Gauge 1 reads the spring tide at the harbour mouth, where the channel narrows and the flood "
    "arrives forty minutes before it reaches the inner basin gauges."
)


def records(**right) -> tuple[RunRecord, RunRecord]:
    """Run 1 (the default tide run) and run 2 (changed by `right`)."""
    return RunRecord(1, None, run(), done=True), RunRecord(2, None, run(**right), done=True)


def changed_right() -> dict:
    """A re-run that pinned kb-balanced, ranked differently and answered at length."""
    return dict(
        pins={"kb": "kb-balanced"},
        kb_order=("kb-balanced", "kb-fast"),
        intervene=True,
        answer=LONG,
        scored=candidates((2, 0.95, True), (1, 0.8, True), (4, 0.5, True), (3, 0.1, False)),
    )


async def open_diff(pilot, **right) -> DiffScreen:
    screen = DiffScreen(*records(**right))
    await pilot.app.push_screen(screen)
    await pilot.pause()
    return screen


# The tests at 150x42 open their diff on one explorer, each after the last one's diff closed.
shared_app = shared_app_of((150, 42))
on_the_shared_app = pytest.mark.asyncio(loop_scope="module")


def row_view(screen: DiffScreen, text: str) -> DiffRowView:
    return next(view for view in screen.query(DiffRowView) if text in (view.row.left, view.row.right))


async def test_a_wrapped_side_makes_the_whole_row_taller():
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_diff(pilot, answer=LONG)
        answer = row_view(screen, LONG)
        assert answer.region.height >= 4  # ~38 columns a side: the long answer wraps on the right only
        first_line = answer.render_line(0).text
        assert "Gauge 1 reads the spring tide at" in first_line.split("~")[0]  # the left answer, same line
        views = list(screen.query(DiffRowView))
        after = views[views.index(answer) + 1]
        assert after.region.y == answer.region.bottom  # the next fact starts below both sides
        line = after.render_line(0).text
        assert line.count(f"cites {GAUGE.format(1)}"[:20]) == 2  # both sides of that fact on one line


@on_the_shared_app
async def test_changes_only_hides_unchanged_rows_and_sections(shared):
    pilot = shared
    screen = await open_diff(pilot, pins={"kb": "kb-fast"})
    same = [view for view in screen.query(DiffRowView) if not view.row.changed]
    changed = [view for view in screen.query(DiffRowView) if view.row.changed]
    assert len(changed) == 1 and same
    await pilot.press("f")
    assert screen.changes_only and all(not view.display for view in same) and changed[0].display
    sections = {str(s.render()).split(" ·")[0]: s.display for s in screen.query(".diff-section")}
    assert sections == {"Request": True, "Plan": False, "Attempts": False, "Evidence": False, "Answer": False}
    assert "changed rows only" in str(screen.query_one("#diff-title").render())
    await pilot.press("f")
    assert not screen.changes_only and all(view.display for view in same)


async def test_next_and_previous_change_scroll_to_each_changed_row():
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_diff(pilot, **changed_right())
        changed = [view for view in screen.query(DiffRowView) if view.row.changed]
        scroller = screen.query_one("#diff-rows")
        seen = []
        for _ in range(len(changed)):
            await pilot.press("n")
            current = [view for view in changed if view.has_class("-current")]
            assert len(current) == 1
            # scrolled into view (once the scroll has landed)
            await until(pilot, lambda: scroller.region.contains(current[0].region.x, current[0].region.y))
            seen.append(current[0])
        assert seen == changed
        assert scroller.scroll_y > 0  # the later changes were below the fold
        await pilot.press("n")  # wraps to the first
        assert changed[0].has_class("-current")
        await pilot.press("N")  # and back to the last
        assert changed[-1].has_class("-current") and not changed[0].has_class("-current")
        await pilot.press("n", "end", "f")  # hiding the unchanged rows goes back to the current change
        current = changed[0]
        # The scroll lands after the rows are laid out again: wait for it rather than for one idle step.
        await until(pilot, lambda: scroller.region.contains(current.region.x, current.region.y))
        assert current.has_class("-current")
        await pilot.press("end", "f")
        await until(pilot, lambda: scroller.region.contains(current.region.x, current.region.y))


@on_the_shared_app
async def test_identical_runs_say_so(shared):
    pilot, app = shared, shared.app
    screen = DiffScreen(RunRecord(1, None, run(), done=True), RunRecord(2, None, run(), done=True))
    await app.push_screen(screen)
    await pilot.pause()
    notes = record_notifications(app)
    assert "identical" in str(screen.query_one("#diff-title").render())
    await pilot.press("n")
    assert notes == ["the two runs are the same"]


@on_the_shared_app
async def test_copy_gives_the_diff_as_text(shared):
    pilot, app = shared, shared.app
    screen = await open_diff(pilot, **changed_right())
    await pilot.press("c")
    assert app.clipboard == screen.diff.plain()
    assert "+ pinned: kb=kb-balanced" in app.clipboard and "- pinned: none" in app.clipboard
    assert f"#1 {GAUGE.format(2)}  0.950  (↑1 · score +0.250)" in app.clipboard


@on_the_shared_app
async def test_the_palette_and_f1_offer_every_diff_key(shared):
    pilot, app = shared, shared.app
    screen = await open_diff(pilot, answer=LONG)
    titles = [title for title, _, _ in app.palette_commands(screen)]
    for title in ("Changed (f)", "Next (n)", "Prev (N)", "Copy (c)", "Back (esc)"):
        assert title in titles
    text, groups = help_for(screen)
    assert (
        text.startswith("## Run diff")
        and ("f", "Show only the rows that differ (toggle)") in dict(groups)["This screen"]
    )
    await pilot.press("escape")
    assert not isinstance(app.screen, DiffScreen)


async def test_a_replay_does_not_offer_the_diff():
    """A replayed trace is one run and cannot make a second: `d` is not offered and does nothing."""
    from fake_kb import CALLER
    from fake_runs import thinkingdb_run
    from helpers import QUESTION, settle

    from core.kernel.contract import Request
    from mrptui.session_seam import NullSession
    from mrptui.widgets.keybar import KeyBar

    app = make_app(NullSession(), replay=thinkingdb_run(Request(question=QUESTION, caller=CALLER)))
    async with app.run_test(size=(150, 42)) as pilot:
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert "Diff" not in str(app.screen.query_one(KeyBar).render())
        assert not any(title.startswith("Diff") for title, _, _ in app.palette_commands(app.screen))
        await pilot.press("d")
        await pilot.pause()
        assert not isinstance(app.screen, DiffScreen)
