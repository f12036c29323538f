"""One end-to-end check against the real session (the explorer's, mrptui.explorer_session) on sample_kb (no fakes)."""

from __future__ import annotations

import asyncio
import os

import pytest
from conftest import make_app
from helpers import ask, settle

from core.units import Caller
from mrptui.explorer_session import ExplorerSession
from mrptui.widgets.evidence import EvidenceTable
from mrptui.widgets.virtual_table import VirtualTable


def write_bees(folder) -> None:
    """A one-unit KB about bees, in `folder`."""
    (folder / "bees.md").write_text(
        "## Context Unit bees::chunk-000::unit-000\nRole: Explanation\nTopic: Drones\n"
        "Claim: Drones are male bees raised from unfertilised eggs.\n",
        encoding="utf-8",
    )


@pytest.fixture(scope="module")
def real_session() -> ExplorerSession:
    return ExplorerSession.open()


async def test_explorer_on_the_real_engine(real_session):
    app = make_app(real_session)
    app.caller = Caller()
    async with app.run_test(size=(160, 45)) as pilot:
        await ask(pilot, "What is Orion?")
        run = app.current
        assert run.done and not run.error and app.cursor == len(run.events)
        assert app.state.answer is not None and app.state.answer.status == "grounded"
        assert app.screen.query_one(EvidenceTable).row_count > 0
        await pilot.press("3", "enter")
        assert "not visible" not in str(app.screen.query_one("#detail-unit").content)
        await pilot.press("escape", "k")
        await settle(pilot)
        assert app.screen.query_one("#kb-units", VirtualTable).row_count == len(real_session.units(app.caller))
        await pilot.press("w")
        assert "question:" in app.screen.markup


async def test_a_fifo_saved_into_the_kb_folder_is_reported_not_waited_on(tmp_path, config_path):
    """The explorer's change poll and reload worker with a named pipe in the KB folder: before,
    the worker blocked in open() forever, the KB screen said "no errors" and ctrl+q hung."""
    write_bees(tmp_path)
    app = make_app(ExplorerSession.open([tmp_path], config_path))
    async with app.run_test(size=(160, 45)) as pilot:
        os.mkfifo(tmp_path / "pipe.md")
        app.lifecycle.poll()
        # A bounded wait: a worker blocked in open() fails the test instead of hanging it.
        await asyncio.wait_for(app.workers.wait_for_complete(), timeout=20)
        await pilot.pause()
        assert any(d.file.endswith("pipe.md") and "named pipe" in d.message for d in app.session.diagnostics())
        await pilot.press("escape", "k")
        await settle(pilot)
        assert "1 error" in str(app.screen.query_one("#kb-counts").content)
        await pilot.press("ctrl+q")
    assert app.return_code in (0, None)


async def test_exports_refuse_the_kb_folder_and_say_where_they_wrote(tmp_path, config_path):
    """An answer saved as Markdown inside the KB folder would be read back as KB text on the next
    reload: the real session refuses it; the default path, in the export folder, is written."""
    from helpers import record_notifications
    from textual.widgets import Input

    kb = tmp_path / "kb"
    kb.mkdir()
    write_bees(kb)
    app = make_app(ExplorerSession.open([kb], config_path))
    async with app.run_test(size=(160, 45)) as pilot:
        await ask(pilot, "What are drones?")
        notes = record_notifications(app)
        for target in (kb / "answer.md", kb / "notes" / ".." / "bees.md"):
            await pilot.press("m")
            app.screen.query_one(Input).value = str(target)
            await pilot.press("enter")
            await pilot.pause()
        await pilot.press("m", "enter")  # the prefilled default
        await pilot.pause()
    default = tmp_path / "exports" / "answer-run1.md"
    assert notes == [
        f"not written: {kb / 'answer.md'}: is a KB or config file this session reads; choose another path",
        f"not written: {kb / 'notes' / '..' / 'bees.md'}: is a KB or config file this session reads; "
        "choose another path",
        f"exported the answer to {default}",
    ]
    assert sorted(p.name for p in kb.iterdir()) == ["bees.md"] and default.read_text().startswith("# What are drones?")


async def test_the_status_line_counts_only_the_callers_problems(tmp_path, config_path):
    """Issue 23, leak 5: a broken staff-only unit is the author's (F8), not the public's status line."""
    write_bees(tmp_path)
    (tmp_path / "staff.md").write_text(
        "## Context Unit hive::chunk-000::unit-000\nRole: Definitoin\nTopic: Hive key\nClaim: The key is 12.\nAcl: staff\n",
        encoding="utf-8",
    )
    app = make_app(ExplorerSession.open([tmp_path], config_path))
    app.caller = Caller()
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        app.kb_health.refresh()
        await settle(pilot)
        assert app.kb.health is not None and app.kb.health.errors == 0
        assert "0 errors" in str(app.screen.query_one("#status").render())
        assert app.session.health().kb_errors == 1  # the author's count, as F8 lists it
        await pilot.press("f8")
        await settle(pilot)
        assert "author view: whole KB" in app.screen.title_text and "staff.md:2:" in app.screen.plain


async def test_a_run_answered_before_a_reload_restricted_its_unit_is_not_copied_or_exported(tmp_path, config_path):
    """Fail closed: the answer quotes the bees unit; the author then adds `Acl: staff`. The run
    answered from the caller's earlier view stays on screen for comparison, but copying or
    exporting it would carry the now-restricted text off the screen, so both are refused until the
    question is asked again."""
    from helpers import record_notifications

    kb = tmp_path / "kb"
    kb.mkdir()
    write_bees(kb)
    app = make_app(ExplorerSession.open([kb], config_path))
    app.caller = Caller()
    exports = tmp_path / "exports"
    async with app.run_test(size=(160, 45)) as pilot:
        await ask(pilot, "What are drones?")
        assert "unfertilised" in app.current.final.answer.answer
        bees = kb / "bees.md"
        bees.write_text(bees.read_text(encoding="utf-8") + "Acl: staff\n", encoding="utf-8")
        app.lifecycle.poll()
        await asyncio.wait_for(app.workers.wait_for_complete(), timeout=20)
        await settle(pilot)
        notes = record_notifications(app)
        for key in ("m", "s", "e"):
            await pilot.press(key)
            await pilot.pause()
            assert app.screen is app.main  # refused before any path is asked for
        app.screen.query_one("#answer").focus()
        await pilot.press("c")
        await pilot.pause()
        refusal = (
            "run 1 was answered from an earlier version of your view of the KB (a reload changed it): "
            "re-run it (r) to copy or export"
        )
        assert notes == [refusal] * 4 and app.clipboard == "" and not exports.exists()
        app.screen.query_one("#answer").blur()
        await pilot.press("r")
        await settle(pilot)
        assert app.current.run_id == 2 and "unfertilised" not in app.current.final.answer.answer
        await pilot.press("m", "enter")
        await pilot.pause()
    assert notes[-1] == f"exported the answer to {exports / 'answer-run2.md'}"
    assert "unfertilised" not in (exports / "answer-run2.md").read_text(encoding="utf-8")
