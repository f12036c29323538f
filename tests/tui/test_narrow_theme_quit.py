"""Pilot tests: a narrow terminal, what does not fit, the theme, and quitting."""

from __future__ import annotations

from helpers import ask

from mrptui.screens.help import HelpScreen
from mrptui.widgets.evidence import EvidenceTable
from mrptui.widgets.plan import PlanPanel
from mrptui.widgets.proofs import ProofTree
from mrptui.widgets.timeline import AttemptsTimeline

SIZE = (160, 45)


async def test_narrow_terminal_shows_one_panel_at_a_time(app):
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert screen.has_class("-narrow")
        await ask(pilot)
        assert screen.query_one(AttemptsTimeline).display and screen.query_one(AttemptsTimeline).region.height > 5
        assert screen.query_one(EvidenceTable).region.height == 0
        await pilot.press("3")
        assert screen.query_one(EvidenceTable).region.height > 5
        assert screen.query_one(AttemptsTimeline).region.height == 0
        await pilot.click("#tab-plan")
        await pilot.pause()
        assert screen.query_one(PlanPanel).region.height > 5
        await pilot.resize_terminal(200, 50)
        await pilot.pause()
        assert not screen.has_class("-narrow")
        assert all(
            screen.query_one(f"#{key}").region.height > 5
            for key in ("plan", "attempts", "evidence", "proofs", "answer")
        )


async def test_theme_toggle_then_ctrl_q_quits_from_a_modal(app):
    async with app.run_test(size=SIZE) as pilot:
        assert app.theme == "textual-dark"
        await pilot.press("ctrl+t")
        assert app.theme == "textual-light"
        await pilot.press("ctrl+t")
        assert app.theme == "textual-dark"
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert app.return_code == 0


async def test_proof_labels_and_table_headers_that_do_not_fit_end_in_an_ellipsis(app):
    async with app.run_test(size=(120, 40)) as pilot:
        await ask(pilot)
        tree = app.screen.query_one(ProofTree)
        await pilot.press("4", "asterisk")
        await pilot.pause()
        room = tree.scrollable_content_region.width
        framed = [strip.text for strip in tree.render_lines(tree.region.reset_offset)]
        lines = [line[1:-1].rstrip() for line in framed[1:-1]]  # inside the pane's frame
        cut = [line for line in lines if line.endswith("…")]
        assert cut, "a 120-column proofs pane cuts the sample's longer facts"
        assert all(len(line) <= room for line in lines)
        # The tree scrolls no further than the pane: the cut label is what there is to see.
        assert tree.virtual_size.width <= room
        timeline = app.screen.query_one(AttemptsTimeline)
        for column in timeline.columns.values():
            if column.width < len(str(column.label)) and len(column.label) > 1:
                assert str(column.label).endswith("…")
